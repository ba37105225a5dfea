"""The parts of an input_fn result that stay Python values on the function engine.

The Estimator handed model_fn what input_fn returned, as it was: Python
lists, numbers, strings and numpy arrays reached model_fn unchanged (a
model_fn converted them where it used them as tensors, and
`tf.nest.flatten(features)` saw a list's items), and a Python list of
tensors stayed a list. A tf.data.Dataset carries only tensors, and turns a
list into one stacked tensor. So the tensors of such a result go through
the Dataset as a flat tuple, and everything else is held here and put back
around them when model_fn is traced. The held values are the same at every
step, as under the Estimator, whose Session ran the same graph constants
each step.
"""

import dataclasses
from typing import Any, List, Optional, Tuple

import tensorflow as tf

from estimator_compat.mode_keys import ModeKeys


def _needs_holding(value: Any) -> bool:
  """Whether a Dataset element could not carry `value`'s leaves as they are.

  A leaf that is no tensor (a Python or numpy value, None), or a list (which
  tf.data would stack into one tensor).
  """
  if isinstance(value, list):
    return True
  if isinstance(value, dict):
    return any(_needs_holding(leaf) for leaf in value.values())
  if isinstance(value, tuple):
    return any(_needs_holding(leaf) for leaf in value)
  return any(not tf.is_tensor(leaf) for leaf in tf.nest.flatten(value))


@dataclasses.dataclass(frozen=True)
class PythonParts:
  """An input_fn result with its tensors taken out.

  Attributes:
    template: the result as model_fn gets it, (features, labels) or features
      alone; its tensors are replaced at each trace.
    has_labels: whether `template` is a (features, labels) pair.
    positions: where the tensors are in `tf.nest.flatten(template)`.
    drops_labels: the results are (features, labels) pairs of which model_fn
      gets the features only (prediction).
  """
  template: Any
  has_labels: bool
  positions: Tuple[int, ...]
  drops_labels: bool = False

  def tensors(self, result: Any) -> Tuple[Any, ...]:
    """The tensors of `result` (shaped like `template`), in order."""
    leaves = tf.nest.flatten(self._model_part(result))
    return tuple(leaves[i] for i in self.positions)

  def _model_part(self, result: Any) -> Any:
    # A prediction's labels are dropped, as the Estimator dropped them.
    if self.drops_labels:
      return result[0]
    return result

  def element(self, result: Any) -> Any:
    """The Dataset element carrying the tensors of `result`.

    A placeholder scalar where there are none (a Dataset element needs at
    least one tensor): model_fn gets only Python values then.
    """
    tensors = self.tensors(result)
    return tensors if tensors else tf.zeros([], tf.int32)

  def rebuild(self, element: Any) -> Any:
    """`template` with the tensors of a Dataset element in place."""
    if not self.positions:
      return self.template
    leaves: List[Any] = list(tf.nest.flatten(self.template))
    for position, tensor in zip(self.positions, element):
      leaves[position] = tensor
    return tf.nest.pack_sequence_as(self.template, leaves)


def held(result: Any, mode: str) -> Optional[PythonParts]:
  """The PythonParts of a normalized input_fn result, or None.

  None when a Dataset can carry the result as it is (tensors in dicts and
  tuples, at least one).

  Args:
    result: (features, labels) as a tuple, or features alone.
    mode: a ModeKeys value (PREDICT drops the labels).
  """
  if not _needs_holding(result) and tf.nest.flatten(result):
    return None
  has_labels = isinstance(result, tuple)
  drops_labels = has_labels and mode == ModeKeys.PREDICT
  if drops_labels:
    result, has_labels = result[0], False
  leaves = tf.nest.flatten(result)
  positions = tuple(i for i, leaf in enumerate(leaves) if tf.is_tensor(leaf))
  return PythonParts(result, has_labels, positions, drops_labels)
