"""Op seeds numbered as in the Estimator's one graph per call.

Under a graph-level seed, TensorFlow gives each random op made without a seed
of its own (tf.random.*, tf.nn.dropout, Keras Dropout, an unseeded
`Dataset.shuffle`, `make_one_shot_iterator`) the op seed n: the number of
such requests made before it in the same graph. The Estimator built
input_fn and then model_fn in one graph, so a model_fn's first unseeded op
had the op seed n = the requests of its input_fn.

The function engine calls input_fn eagerly, where op seeds come from a
random stream, and traces model_fn into a graph of its own, where numbering
starts at 0. `numbered_eagerly` numbers eager requests 0, 1, ... as that
graph did; `continue_numbering` starts a traced graph's numbering at the
input's count. Datasets and input graphs carry their count (`record`,
`used_by`).
"""

import contextlib
import weakref
from typing import Iterator

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import context
from tensorflow.python.framework import random_seed

# Dataset -> op seeds its input_fn requested (as counted in a TF1 graph).
_USED = weakref.WeakKeyDictionary()


class Numbered:
  """Stands for the eager context's seed stream: 0, 1, 2, ... (`count`)."""

  def __init__(self):
    self.count = 0

  def randint(self, low: int, high: int) -> int:
    del low, high  # Only TensorFlow's internal_operation_seed calls this.
    number = self.count
    self.count += 1
    return number


@contextlib.contextmanager
def numbered_eagerly() -> Iterator[Numbered]:
  """Eager op seeds (under a global seed) numbered as in a fresh graph."""
  ctx = context.context()
  previous = getattr(ctx, "_rng", None)
  numbered = Numbered()
  ctx._rng = numbered  # pylint: disable=protected-access
  try:
    yield numbered
  finally:
    ctx._rng = previous  # pylint: disable=protected-access


class _InGraph:
  """Stands for the eager seed stream: the next number of `graph`'s requests."""

  def __init__(self, graph: tf.Graph):
    self._graph = graph

  def randint(self, low: int, high: int) -> int:
    del low, high
    number = requested_in(self._graph)
    continue_numbering(self._graph, number + 1)
    return number


@contextlib.contextmanager
def eager_requests_numbered_in(graph: tf.Graph) -> Iterator[None]:
  """Eager requests (variables made in init_scope) take `graph`'s numbers.

  In the Estimator's graph a variable's initializer (an embedding column's
  truncated normal, a v1 initializer) took its op seed from the graph's
  numbering; traced here, the variable is made eagerly.
  """
  ctx = context.context()
  previous = getattr(ctx, "_rng", None)
  ctx._rng = _InGraph(graph)  # pylint: disable=protected-access
  try:
    yield
  finally:
    ctx._rng = previous  # pylint: disable=protected-access


def requested_in(graph: tf.Graph) -> int:
  """How many unseeded op-seed requests `graph` has numbered so far."""
  return random_seed._graph_to_seed_dict.get(graph, 0)  # pylint: disable=protected-access


def continue_numbering(graph: tf.Graph, count: int) -> None:
  """The next unseeded random op made in `graph` gets op seed `count`."""
  random_seed._graph_to_seed_dict[graph] = count  # pylint: disable=protected-access


def record(dataset: tf.data.Dataset, count: int) -> tf.data.Dataset:
  """Notes that `dataset`'s input_fn requested `count` op seeds."""
  _USED[dataset] = count
  return dataset


def used_by(dataset) -> int:
  """The op seeds `dataset`'s input_fn requested (0 when not recorded)."""
  try:
    return _USED.get(dataset, 0)
  except TypeError:  # not weakly referenceable
    return 0


def fresh_kernel_for(initial_value) -> None:
  """Starts a seeded initializer's random stream afresh, as a TF1 op did.

  In a TF1 graph each initializer is an op of its own, with a kernel of its
  own: two variables initialized with the same seeded initializer (e.g. a
  `variable_scope(initializer=glorot_uniform_initializer(seed=5))` over a
  GRU cell's two kernels) both draw from the start of that seed's stream.
  Eager execution keeps one kernel per seed pair, so the second would draw
  the stream's next values. Clearing the eager kernel cache before a seeded
  initializer runs gives it the fresh kernel it had in TF1.

  Args:
    initial_value: a variable's initial value: an initializer bound to its
      shape (`functools.partial`, as get_variable and Keras' add_weight
      pass it), a callable or a tensor.
  """
  initializer = getattr(initial_value, "func", initial_value)
  if getattr(initializer, "seed", None) is not None:
    context.context().clear_kernel_cache()
