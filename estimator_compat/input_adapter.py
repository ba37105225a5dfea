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


def _as_tensor_tree(value: Any, where: str) -> Any:
  """Checks a features or labels structure; converts numpy leaves."""
  if isinstance(value, dict):
    out = {}
    for key, leaf in value.items():
      if not isinstance(key, str):
        raise TypeError(
            f"input_fn {where} dict keys must be strings, got {key!r}.")
      out[key] = _as_tensor_tree(leaf, f"{where}[{key!r}]")
    return out
  if isinstance(value, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor,
                        tf.Variable)) or tf.is_tensor(value):
    return value
  if isinstance(value, (tuple, list)) and _holds_tensors(value):
    # (label_a, label_b), [features_a, features_b], nested tuples: the
    # Estimator handed model_fn any structure, of the same type.
    return type(value)(_as_tensor_tree(leaf, f"{where}[{i}]")
                       for i, leaf in enumerate(value))
  if isinstance(value, (np.ndarray, np.generic, int, float, bool)):
    return tf.convert_to_tensor(value)
  raise TypeError(
      f"input_fn returned {where} of type {type(value).__name__} "
      f"({str(value)[:60]!r}); it must return {_ALLOWED}. Fix: build the "
      "input with tf.data or tf.compat.v1.estimator.inputs.numpy_input_fn.")


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

  Lists, numbers, strings and numpy arrays become tensors where they are
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


def split_input(result: Any, where: str = "input_fn"
               ) -> Tuple[Any, Any, List[SessionRunHook]]:
  """Returns (features, labels, hooks) from an input_fn result (graph mode).

  Raises:
    TypeError: the result is none of the supported forms.
  """
  hooks: List[SessionRunHook] = []
  if isinstance(result, tf.data.Dataset):
    iterator = tf.compat.v1.data.make_initializable_iterator(result)
    hooks.append(_IteratorInitializerHook(iterator))
    result = iterator.get_next()
  result = python_values_as_tensors(result)
  if isinstance(result, (tuple, list)):
    if len(result) != 2:
      raise TypeError(
          f"{where} returned a {type(result).__name__} of length "
          f"{len(result)}; it must return {_ALLOWED}.")
    features, labels = result
    labels = None if labels is None else _as_tensor_tree(labels, "labels")
    return _as_tensor_tree(features, "features"), labels, hooks
  if isinstance(result, dict) or tf.is_tensor(result):
    return _as_tensor_tree(result, "features"), None, hooks
  raise TypeError(
      f"{where} returned {type(result).__name__} ({str(result)[:60]!r}); it "
      f"must return {_ALLOWED}. Fix: return e.g. "
      "tf.data.Dataset.from_tensor_slices((features, labels)).batch(32).")
