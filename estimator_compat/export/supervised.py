"""Receivers for TRAIN and EVAL graphs in a SavedModel: features and labels.

`Estimator.experimental_export_all_saved_models` writes a MetaGraph per
mode; its TRAIN and EVAL graphs call the model_fn with labels, so their
receiver_fns return a SupervisedInputReceiver. These are the Estimator's
`export.export` names (`build_raw_supervised_input_receiver_fn` is also
`tf.estimator.experimental.build_raw_supervised_input_receiver_fn`).
"""

import collections
from typing import Any, Callable, Dict, Optional

import tensorflow as tf

from estimator_compat.export.receivers import (
    SINGLE_LABEL_DEFAULT_NAME, SINGLE_RECEIVER_DEFAULT_NAME,
    ServingInputReceiver, placeholder_like, wrap_and_check_input_tensors)
from estimator_compat.front.input_adapter import (python_values_as_tensors,
                                            split_input)


class UnsupervisedInputReceiver(ServingInputReceiver):
  """A ServingInputReceiver for TRAIN/EVAL graphs of models without labels.

  It has no receiver_tensors_alternatives (those serve extra signatures).
  """

  def __new__(cls, features: Any, receiver_tensors: Any):
    return super().__new__(cls, features, receiver_tensors, None)


class SupervisedInputReceiver(collections.namedtuple(
    "SupervisedInputReceiver", ["features", "labels", "receiver_tensors"])):
  """Features and labels for the model_fn, and the tensors a request feeds.

  `features` and `labels` are kept as given (a tensor or a dict keyed by
  strings or ints) and passed to the model_fn so; a single receiver tensor
  is wrapped as {"input": tensor}.
  """

  def __new__(cls, features: Any, labels: Any, receiver_tensors: Any):
    wrap_and_check_input_tensors(features, "feature", allow_int_keys=True)
    wrap_and_check_input_tensors(labels, "label", allow_int_keys=True)
    receiver_tensors = wrap_and_check_input_tensors(receiver_tensors,
                                                    "receiver_tensor")
    return super().__new__(cls, features, labels, receiver_tensors)


def _placeholders(value: Any, single_key: str,
                  default_batch_size: Optional[int]):
  """(what the model_fn gets, the receiver tensors feeding it)."""
  if isinstance(value, dict):
    copies = {key: placeholder_like(tensor, default_batch_size)
              for key, tensor in value.items()}
    return copies, dict(copies)
  copy = placeholder_like(value, default_batch_size)
  return copy, {single_key: copy}


def _keys(value: Any, single_key: str):
  return set(value) if isinstance(value, dict) else {single_key}


def build_raw_supervised_input_receiver_fn(
    features: Any, labels: Any, default_batch_size: Optional[int] = None
) -> Callable[[], SupervisedInputReceiver]:
  """A receiver_fn feeding features and labels as raw tensors like these.

  Each tensor becomes a placeholder of its dtype and shape, with the batch
  dimension set to `default_batch_size`; the model_fn gets them in the same
  structure (a tensor or a dict). The request feeds them under their keys; a
  single features tensor under "input", a single labels tensor under
  "label".

  Raises:
    ValueError: features and labels share a key.
  """
  overlap = (_keys(features, SINGLE_RECEIVER_DEFAULT_NAME) &
             _keys(labels, SINGLE_LABEL_DEFAULT_NAME))
  if overlap:
    raise ValueError(
        "Features and labels must have distinct keys. Found overlapping "
        f"keys: {overlap}. Fix: rename them; the request feeds features and "
        "labels by these keys in one signature.")

  def supervised_input_receiver_fn():
    feature_copies, receivers = _placeholders(
        features, SINGLE_RECEIVER_DEFAULT_NAME, default_batch_size)
    label_copies, label_receivers = _placeholders(
        labels, SINGLE_LABEL_DEFAULT_NAME, default_batch_size)
    receivers.update(label_receivers)
    return SupervisedInputReceiver(feature_copies, label_copies, receivers)

  return supervised_input_receiver_fn


def build_supervised_input_receiver_fn_from_input_fn(
    input_fn: Callable[..., Any], **input_fn_args: Dict[str, Any]
) -> Callable[[], SupervisedInputReceiver]:
  """A supervised receiver_fn shaped like what `input_fn` returns.

  `input_fn(**input_fn_args)` runs once, now, in a graph of its own; its
  (features, labels) (or a Dataset of them) give the dtypes and shapes of
  the placeholders, as in `build_raw_supervised_input_receiver_fn`.

  Raises:
    ValueError: input_fn returned no labels.
  """
  with tf.Graph().as_default():
    features, labels, _ = split_input(
        python_values_as_tensors(input_fn(**input_fn_args)),
        getattr(input_fn, "__name__", "input_fn"))
  if labels is None:
    raise ValueError(
        "build_supervised_input_receiver_fn_from_input_fn needs labels, but "
        "input_fn returned features only. Fix: return (features, labels) "
        "from input_fn, or use build_raw_serving_input_receiver_fn for a "
        "graph without labels.")
  return build_raw_supervised_input_receiver_fn(features, labels)
