"""Turns whatever an input_fn returned into (features, labels) for a mode."""

from typing import Any, List, Tuple

import numpy as np
import tensorflow as tf

from estimator_compat.hooks import SessionRunHook

_ALLOWED = (
    "a tf.data.Dataset (of features or of (features, labels)), a "
    "(features, labels) tuple, or features alone (a Tensor or a dict of "
    "Tensors)")


class _IteratorInitializerHook(SessionRunHook):
  """Initializes a dataset iterator once the session exists."""

  def __init__(self, iterator):
    self._iterator = iterator

  def after_create_session(self, session, coord):
    del coord
    session.run(self._iterator.initializer)


_PYTHON_VALUES = (list, int, float, bool, str, bytes, np.ndarray, np.generic)


def _is_python_tuple(value: Any) -> bool:
  """A tuple of only Python / numpy values, e.g. labels `((5.0,), (3.0,))`.

  The Estimator passed it on and the canned heads made it a tensor; a tuple
  holding any tensor is a structure and stays as it is.
  """
  return isinstance(value, tuple) and all(
      isinstance(leaf, _PYTHON_VALUES) for leaf in tf.nest.flatten(value))


def _holds_tensors(value: Any) -> bool:
  """Whether a tuple or list has a tensor among its leaves."""
  return any(tf.is_tensor(leaf) for leaf in tf.nest.flatten(value))


def _value_as_tensor(value: Any, where: str) -> Any:
  if isinstance(value, dict):
    return {key: _value_as_tensor(leaf, f"{where}[{key!r}]")
            for key, leaf in value.items()}
  if isinstance(value, (tuple, list)) and _holds_tensors(value):
    # A structure of tensors (not one value to stack): kept as it is.
    return type(value)(_value_as_tensor(leaf, f"{where}[{i}]")
                       for i, leaf in enumerate(value))
  if not isinstance(value, _PYTHON_VALUES) and not _is_python_tuple(value):
    return value
  try:
    return tf.convert_to_tensor(value)
  except (TypeError, ValueError) as e:
    raise TypeError(
        f"input_fn returned {where} {str(value)[:60]!r}, which cannot be a "
        f"tensor: {e} Fix: give every row the same length and one type, or "
        "build the input with tf.data.") from None


def python_values_as_tensors(result: Any) -> Any:
  """An input_fn result with its Python and numpy values made tensors.

  For a tf.data.Dataset that must carry the result (input_fn_to_dataset_fn,
  a distribution strategy's input, placeholders shaped like the result);
  model_fn gets them unchanged, as from the Estimator. Lists, numbers,
  strings and numpy arrays become tensors where they are
  features or labels: the two items of a (features, labels) pair (a tuple,
  or a list of two as the Estimator read it) and the values of a features
  or labels dict. Anything else (a Dataset, tensors, a bare string or number
  returned alone, which is rejected later) is returned unchanged.
  """
  if isinstance(result, (tuple, list)) and len(result) == 2:
    return (_value_as_tensor(result[0], "features"),
            _value_as_tensor(result[1], "labels"))
  if isinstance(result, dict):
    return _value_as_tensor(result, "features")
  return result


def check_pair(result: Any, where: str = "input_fn", of: str = "") -> None:
  """Raises the Estimator's error for a tuple or list that is not a pair.

  Args:
    result: what input_fn returned, or an element (or element_spec) of the
      Dataset it returned.
    where: the input_fn's name, for the message.
    of: "a Dataset of " when `result` is a Dataset's element.

  Raises:
    ValueError: `result` is a tuple or list whose length is not 2, with the
      Estimator's wording first.
  """
  if isinstance(result, (tuple, list)) and len(result) != 2:
    raise ValueError(
        "input_fn should return (features, labels) as a len 2 tuple. "
        f"{where} returned {of or 'a '}{type(result).__name__}"
        f"{'s' if of else ''} of length {len(result)}. Fix: return "
        "(features, labels), features alone, or a tf.data.Dataset of them.")


def split_input(result: Any, where: str = "input_fn"
               ) -> Tuple[Any, Any, List[SessionRunHook]]:
  """Returns (features, labels, hooks) from an input_fn result (graph mode).

  As the Estimator: a Dataset is read through an initializable iterator;
  everything else reaches model_fn as input_fn returned it (Python lists,
  numbers and numpy arrays included, which model_fn converts where it uses
  them as tensors).

  Raises:
    ValueError: a tuple or list (or a Dataset's element) of a length other
      than 2, as in the Estimator.
    TypeError: the result is none of the supported forms.
  """
  hooks: List[SessionRunHook] = []
  if isinstance(result, tf.data.Dataset):
    iterator = tf.compat.v1.data.make_initializable_iterator(result)
    hooks.append(_IteratorInitializerHook(iterator))
    result = iterator.get_next()
  if isinstance(result, (tuple, list)):
    check_pair(result, where, "" if not hooks else "a Dataset of ")
    features, labels = result
    return features, labels, hooks
  if isinstance(result, (dict, np.ndarray)) or tf.is_tensor(result):
    return result, None, hooks
  raise TypeError(
      f"{where} returned {type(result).__name__} ({str(result)[:60]!r}); it "
      f"must return {_ALLOWED}. Fix: return e.g. "
      "tf.data.Dataset.from_tensor_slices((features, labels)).batch(32).")
