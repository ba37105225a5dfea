"""The input of one call on the function engine, as a tf.data.Dataset.

input_fn is called once, as the Estimator called it: in a private TF1 graph
set up as the Estimator's (`graph_input.build`: tf_random_seed as the graph
seed, global_step, then input_fn). A Dataset built there is imported into a
function and used eagerly, its ops keeping the Estimator's seeds. Tensors are
what the Estimator's Session evaluated at every step, so `graph_input` finds
out what they depend on: constants are repeated, tensors a private Session
can evaluate (a one-shot iterator, random ops) are streamed from it step by
step until the end of the input, and tensors that need the user's own
Session work (placeholders, initializable iterators) route the call to the
graph engine (which calls input_fn again).

Under a strategy, inside a function (per-worker datasets), for our own
numpy_input_fn / pandas_input_fn (a Dataset when called eagerly), or when
input_fn fails in a graph (eager-only code), input_fn is called eagerly with
tf_random_seed as the global seed; a Dataset is used as it is, and tensors
are then built again in the private graph (a second call).

The result's Python and numpy values and lists stay out of the Dataset and
reach model_fn as they are (`model_input`, python_parts.py).
"""

import contextlib
from typing import Any, Iterator, List, Optional, Tuple

import tensorflow as tf

from estimator_compat.front import predict_input_check
from estimator_compat.engines.function import graph_input
from estimator_compat.engines.function import python_parts
from estimator_compat.engines.function.python_parts import PythonParts
from estimator_compat.engines.function import op_seeds
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine
from estimator_compat.front.input_adapter import (_ALLOWED, check_pair,
                                                  python_values_as_tensors)
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import ModelSetup, invoke_input_fn


@contextlib.contextmanager
def _graph_seed(seed: Optional[int]) -> Iterator[Optional[op_seeds.Numbered]]:
  """tf_random_seed as the global seed while input_fn runs eagerly.

  The Estimator built input_fn in a graph seeded with tf_random_seed, so an
  op seeded `shuffle(n, seed=3)` drew from (tf_random_seed, 3), and an
  unseeded one from (tf_random_seed, n) for the n-th unseeded request of
  the graph; eagerly they draw from (global seed, 3) and (global seed, n) as
  numbered by `op_seeds`, which yields that count. The previous global seed
  is set back after (which restarts the eager op-seed sequence of a program
  that set one).
  """
  if seed is None:
    yield None
    return
  previous = tf.compat.v1.get_seed(None)[0] if tf.executing_eagerly() else None
  tf.random.set_seed(seed)
  try:
    with op_seeds.numbered_eagerly() as numbered:
      yield numbered
  finally:
    if tf.executing_eagerly():
      tf.random.set_seed(previous)


def _not_distributable(where: str) -> ValueError:
  # The Estimator's words under a strategy, then why and the fix.
  return ValueError(
      "input_fn must return a tf.data.Dataset or a callable. "
      f"{where} returns tensors that change at every step (an iterator's "
      "get_next() or other stateful ops), which cannot be split across "
      "replicas. Fix: return the Dataset itself, e.g. `return dataset` "
      "instead of `return make_one_shot_iterator(dataset).get_next()`.")


def _has_list_of_tensors(value) -> bool:
  """Whether a list holding tensors is part of an input_fn result."""
  if isinstance(value, dict):
    return any(_has_list_of_tensors(v) for v in value.values())
  if isinstance(value, list) and any(
      tf.is_tensor(leaf) for leaf in tf.nest.flatten(value)):
    return True
  if isinstance(value, tuple):
    return any(_has_list_of_tensors(v) for v in value)
  return False


def _check_feedable(result, where: str) -> None:
  """Raises NeedsGraphEngine for tensors a tf.data.Dataset cannot carry."""
  if _has_list_of_tensors(result):
    # tf.data stacks a list into one tensor; model_fn got the list itself.
    raise NeedsGraphEngine(
        f"{where} returns a Python list of tensors (e.g. labels [label_a, "
        "label_b]), which the function engine's tf.data.Dataset cannot "
        "carry as a list (a tuple it can). "
        f"{GRAPH_ENGINE_FIX}")
  if not tf.nest.flatten(result):
    # ({}, None): steps without input, which a TF1 Session runs as they are.
    raise NeedsGraphEngine(
        f"{where} returns no tensors (empty features and no labels); the "
        "function engine feeds its steps from a tf.data.Dataset, which needs "
        "at least one tensor, while a TF1 Session runs steps without input. "
        f"{GRAPH_ENGINE_FIX}")


def make_dataset(setup: ModelSetup, input_fn, mode: str,
                 input_context=None, distributed: bool = False
                ) -> tf.data.Dataset:
  """The Dataset of what input_fn fed the model_fn at successive steps.

  Python and numpy values of the result are made tensors (a Dataset carries
  only tensors).

  Args:
    setup: the Estimator's model setup.
    input_fn: the user's input_fn.
    mode: a ModeKeys value.
    input_context: a tf.distribute.InputContext, given to input_fn when it
      declares one.
    distributed: the Dataset is for a distribution strategy.

  Raises:
    TypeError: input_fn returned none of the supported forms.
    ValueError: under a strategy, tensors that change at every step.
    NeedsGraphEngine: the tensors need the user's TF1 Session work.
  """
  dataset, _ = _make(setup, input_fn, mode, input_context, distributed,
                     hold=False)
  return dataset


def model_input(setup: ModelSetup, input_fn, mode: str
               ) -> Tuple[tf.data.Dataset, Optional[PythonParts]]:
  """The input of one call on one device, as model_fn gets it.

  Returns:
    (the Dataset, the PythonParts to rebuild each element with, or None
    where the element is what model_fn gets). The result's Python and numpy
    values, and its lists, stay as they are (python_parts.py).

  Raises:
    TypeError: input_fn returned none of the supported forms.
    NeedsGraphEngine: the tensors need the user's TF1 Session work.
  """
  dataset, parts = _make(setup, input_fn, mode, None, False, hold=True)
  if parts is None:  # Else the element is PythonParts' flat tensors.
    check_element(dataset, input_fn)
  return dataset, parts


def check_element(dataset: tf.data.Dataset, input_fn) -> tf.data.Dataset:
  """Raises the Estimator's ValueError for a Dataset of non-pair tuples.

  For the Estimator's calls only: a Keras input (adapters) may carry
  (x, y, sample_weight).

  Returns:
    `dataset`.
  """
  check_pair(dataset.element_spec, getattr(input_fn, "__name__", "input_fn"),
             "a Dataset of ")
  return dataset


def _make(setup: ModelSetup, input_fn, mode: str, input_context,
          distributed: bool, hold: bool
         ) -> Tuple[tf.data.Dataset, Optional[PythonParts]]:
  """make_dataset, or with `hold` model_input.

  With `hold`, the PythonParts are found in the eager result (or, where
  input_fn runs only in a graph, in the graph's); the input_fn built in a
  graph (for classify and stream) then gives the same flat element of
  tensors.
  """
  where = getattr(input_fn, "__name__", "input_fn")

  def call():
    result = invoke_input_fn(setup, input_fn, mode, input_context)
    return result if hold else python_values_as_tensors(result)

  parts: List[Optional[PythonParts]] = [None]

  def tensors_of(result):
    # In the graph: what the Dataset element carries.
    if parts[0] is None:
      return graph_input.as_tensors(result)
    return parts[0].element(result)

  def held_in_graph(result):
    # Where input_fn runs in a graph first: its PythonParts come from there.
    if hold:
      parts[0] = python_parts.held(result, mode)
    return tensors_of(result)

  if not distributed and tf.executing_eagerly() and not getattr(
      input_fn, "estimator_compat_eager_dataset", False):
    try:
      built = graph_input.build(setup.config.tf_random_seed, mode, call,
                                where, _ALLOWED, held_in_graph, datasets=True)
    except NeedsGraphEngine:
      raise
    except Exception as graph_error:  # pylint: disable=broad-except
      # Code that runs only eagerly (it captures eager tensors or tables):
      # a Dataset made eagerly is used as before.
      with _graph_seed(setup.config.tf_random_seed) as numbered:
        result = call()
      if isinstance(result, tf.data.Dataset):
        return op_seeds.record(result, numbered.count if numbered else 0), None
      raise graph_error
    return _from_graph(built, mode, where, parts[0])
  try:
    with _graph_seed(setup.config.tf_random_seed) as numbered:
      result = call()
  except RuntimeError as eager_error:
    # A TF1-only API (make_initializable_iterator, placeholder, queues) that
    # refuses eager execution: the graph tells what it needs.
    try:
      built = graph_input.build(setup.config.tf_random_seed, mode, call,
                                where, _ALLOWED, held_in_graph)
    except Exception:  # pylint: disable=broad-except
      raise eager_error  # noqa: B904  pylint: disable=raise-missing-from
    graph_input.classify(built, where)
    if distributed:
      raise _not_distributable(where) from eager_error
    return op_seeds.record(graph_input.stream(built), built.op_seeds), parts[0]
  if isinstance(result, tf.data.Dataset):
    return op_seeds.record(result, numbered.count if numbered else 0), None
  result = graph_input.normalize(result, where, _ALLOWED)
  if hold:
    parts[0] = python_parts.held(result, mode)
  if parts[0] is None:
    _check_feedable(result, where)
  built = graph_input.build(setup.config.tf_random_seed, mode, call, where,
                            _ALLOWED, tensors_of)
  kind = graph_input.classify(built, where)
  if mode == ModeKeys.PREDICT:
    features = built.element
    if parts[0] is None and isinstance(features, tuple):
      features = features[0]
    predict_input_check.warn_if_endless(features, built.graph)
  if kind == graph_input.CONSTANT:
    # The same value at every step, as a Session evaluated it.
    element = result if parts[0] is None else parts[0].element(result)
    return op_seeds.record(tf.data.Dataset.from_tensors(element).repeat(),
                           built.op_seeds), parts[0]
  if distributed:
    raise _not_distributable(where)
  return op_seeds.record(graph_input.stream(built), built.op_seeds), parts[0]


def _from_graph(built: graph_input.InputGraph, mode: str, where: str,
                parts: Optional[PythonParts]
               ) -> Tuple[tf.data.Dataset, Optional[PythonParts]]:
  """The input of what input_fn, called once in `built`, fed model_fn.

  The model_fn's unseeded op seeds go on from input_fn's requests in that
  graph, as in the Estimator's one graph per call (op_seeds.py).
  """
  if isinstance(built.element, tf.data.Dataset):
    graph_input.check_dataset(built, where)
    return op_seeds.record(graph_input.eager_dataset(built),
                           built.op_seeds), None
  if parts is None:
    _check_feedable(built.element, where)
  kind = graph_input.classify(built, where)
  if mode == ModeKeys.PREDICT:
    features = built.element
    if parts is None and isinstance(features, tuple):
      features = features[0]
    predict_input_check.warn_if_endless(features, built.graph)
  if kind == graph_input.CONSTANT:
    return op_seeds.record(graph_input.constant(built), built.op_seeds), parts
  return op_seeds.record(graph_input.stream(built), built.op_seeds), parts


def make_input(setup: ModelSetup, input_fn, mode: str,
               strategy: Optional[tf.distribute.Strategy]
              ) -> Tuple[Any, Optional[PythonParts]]:
  """The input of one call: a Dataset, or under a strategy its distribution.

  Under a strategy, input_fn is called once per worker (with an
  `input_context` when it declares one) and each of its batches goes to one
  replica, so its batch size is the per-replica batch size, as in the
  Estimator.

  Returns:
    (the Dataset or distributed dataset, the PythonParts its elements are
    rebuilt with or None; see `model_input`).
  """
  if strategy is None:
    return model_input(setup, input_fn, mode)
  return strategy.distribute_datasets_from_function(
      lambda context: check_element(make_dataset(
          setup, input_fn, mode, context, distributed=True), input_fn)), None
