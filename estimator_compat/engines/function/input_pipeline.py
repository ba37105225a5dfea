"""The input of one call on the function engine, as a tf.data.Dataset."""

from typing import Optional

import tensorflow as tf

from estimator_compat.input_adapter import _ALLOWED
from estimator_compat.model_fn_call import ModelSetup, invoke_input_fn


def make_dataset(setup: ModelSetup, input_fn, mode: str,
                 input_context=None) -> tf.data.Dataset:
  """Calls input_fn eagerly; returns a Dataset of its batches."""
  result = invoke_input_fn(setup, input_fn, mode, input_context)
  if isinstance(result, tf.data.Dataset):
    return result
  if isinstance(result, (tuple, list)) and len(result) == 2:
    result = tuple(result)
  elif not (isinstance(result, dict) or tf.is_tensor(result)):
    raise TypeError(
        f"{getattr(input_fn, '__name__', 'input_fn')} returned "
        f"{type(result).__name__} ({str(result)[:60]!r}); it must return "
        f"{_ALLOWED}. Fix: return e.g. "
        "tf.data.Dataset.from_tensor_slices((features, labels)).batch(32).")
  # Tensors: the same batch at every step, as a graph evaluated them.
  return tf.data.Dataset.from_tensors(result).repeat()


def make_input(setup: ModelSetup, input_fn, mode: str,
               strategy: Optional[tf.distribute.Strategy]):
  """The input of one call: a Dataset, or under a strategy its distribution.

  Under a strategy, input_fn is called once per worker (with an
  `input_context` when it declares one) and each of its batches goes to one
  replica, so its batch size is the per-replica batch size, as in the
  Estimator.
  """
  if strategy is None:
    return make_dataset(setup, input_fn, mode)
  return strategy.distribute_datasets_from_function(
      lambda context: make_dataset(setup, input_fn, mode, context))
