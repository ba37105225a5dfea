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
"""

import contextlib
from typing import Iterator, Optional

import tensorflow as tf

from estimator_compat import predict_input_check
from estimator_compat.engines.function import graph_input
from estimator_compat.engines.function.session import (GRAPH_ENGINE_FIX,
                                                       NeedsGraphEngine)
from estimator_compat.input_adapter import _ALLOWED, python_values_as_tensors
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.model_fn_call import ModelSetup, invoke_input_fn


@contextlib.contextmanager
def _graph_seed(seed: Optional[int]) -> Iterator[None]:
  """tf_random_seed as the global seed while input_fn runs eagerly.

  The Estimator built input_fn in a graph seeded with tf_random_seed, so an
  op seeded `shuffle(n, seed=3)` drew from (tf_random_seed, 3); eagerly it
  draws from (global seed, 3). The previous global seed is set back after
  (which restarts the eager op-seed sequence of a program that set one).
  """
  if seed is None:
    yield
    return
  previous = tf.compat.v1.get_seed(None)[0] if tf.executing_eagerly() else None
  tf.random.set_seed(seed)
  try:
    yield
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
  where = getattr(input_fn, "__name__", "input_fn")

  def call():
    return python_values_as_tensors(
        invoke_input_fn(setup, input_fn, mode, input_context))

  if not distributed and tf.executing_eagerly() and not getattr(
      input_fn, "estimator_compat_eager_dataset", False):
    try:
      built = graph_input.build(setup.config.tf_random_seed, mode, call,
                                where, _ALLOWED, datasets=True)
    except NeedsGraphEngine:
      raise
    except Exception as graph_error:  # pylint: disable=broad-except
      # Code that runs only eagerly (it captures eager tensors or tables):
      # a Dataset made eagerly is used as before.
      with _graph_seed(setup.config.tf_random_seed):
        result = call()
      if isinstance(result, tf.data.Dataset):
        return result
      raise graph_error
    return _from_graph(built, mode, where)
  try:
    with _graph_seed(setup.config.tf_random_seed):
      result = call()
  except RuntimeError as eager_error:
    # A TF1-only API (make_initializable_iterator, placeholder, queues) that
    # refuses eager execution: the graph tells what it needs.
    try:
      built = graph_input.build(setup.config.tf_random_seed, mode, call,
                                where, _ALLOWED)
    except Exception:  # pylint: disable=broad-except
      raise eager_error  # pylint: disable=raise-missing-from
    graph_input.classify(built, where)
    if distributed:
      raise _not_distributable(where) from eager_error
    return graph_input.stream(built)
  if isinstance(result, tf.data.Dataset):
    return result
  result = graph_input.normalize(result, where, _ALLOWED)
  _check_feedable(result, where)
  built = graph_input.build(setup.config.tf_random_seed, mode, call, where,
                            _ALLOWED)
  kind = graph_input.classify(built, where)
  if mode == ModeKeys.PREDICT:
    features = built.element
    predict_input_check.warn_if_endless(
        features[0] if isinstance(features, tuple) else features, built.graph)
  if kind == graph_input.CONSTANT:
    # The same value at every step, as a Session evaluated it.
    return tf.data.Dataset.from_tensors(result).repeat()
  if distributed:
    raise _not_distributable(where)
  return graph_input.stream(built)


def _from_graph(built: graph_input.InputGraph, mode: str,
                where: str) -> tf.data.Dataset:
  """The Dataset of what input_fn, called once in `built`, fed model_fn."""
  if isinstance(built.element, tf.data.Dataset):
    graph_input.check_dataset(built, where)
    return graph_input.eager_dataset(built)
  _check_feedable(built.element, where)
  kind = graph_input.classify(built, where)
  if mode == ModeKeys.PREDICT:
    features = built.element
    predict_input_check.warn_if_endless(
        features[0] if isinstance(features, tuple) else features, built.graph)
  if kind == graph_input.CONSTANT:
    return graph_input.constant(built)
  return graph_input.stream(built)


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
      lambda context: make_dataset(setup, input_fn, mode, context,
                                   distributed=True))
