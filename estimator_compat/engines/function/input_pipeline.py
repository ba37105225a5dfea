"""The input of one call on the function engine, as a tf.data.Dataset.

input_fn is called eagerly, with tf_random_seed as the global seed (the
Estimator's graph seed). A Dataset is used as it is. Tensors are what the
Estimator's Session evaluated at every step, so `graph_input` finds out what
they depend on: constants are repeated, tensors a private Session can
evaluate (a one-shot iterator, random ops) are streamed from it step by step
until the end of the input, and tensors that need the user's own Session work
(placeholders, initializable iterators) route the call to the graph engine.
Such an input_fn is called twice per call: eagerly, then in a private graph.
"""

import contextlib
from typing import Iterator, Optional

import tensorflow as tf

from estimator_compat import predict_input_check
from estimator_compat.engines.function import graph_input
from estimator_compat.engines.function import op_seeds
from estimator_compat.engines.function.session import (GRAPH_ENGINE_FIX,
                                                       NeedsGraphEngine)
from estimator_compat.input_adapter import _ALLOWED, python_values_as_tensors
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.model_fn_call import ModelSetup, invoke_input_fn


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

  try:
    with _graph_seed(setup.config.tf_random_seed) as numbered:
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
    return op_seeds.record(graph_input.stream(built), built.op_seeds)
  if isinstance(result, tf.data.Dataset):
    return op_seeds.record(result, numbered.count if numbered else 0)
  result = graph_input.normalize(result, where, _ALLOWED)
  if not tf.nest.flatten(result):
    # ({}, None): steps without input, which a TF1 Session runs as they are.
    raise NeedsGraphEngine(
        f"{where} returns no tensors (empty features and no labels); the "
        "function engine feeds its steps from a tf.data.Dataset, which needs "
        "at least one tensor, while a TF1 Session runs steps without input. "
        f"{GRAPH_ENGINE_FIX}")
  built = graph_input.build(setup.config.tf_random_seed, mode, call, where,
                            _ALLOWED)
  kind = graph_input.classify(built, where)
  if mode == ModeKeys.PREDICT:
    features = built.element
    predict_input_check.warn_if_endless(
        features[0] if isinstance(features, tuple) else features, built.graph)
  if kind == graph_input.CONSTANT:
    # The same value at every step, as a Session evaluated it.
    return op_seeds.record(tf.data.Dataset.from_tensors(result).repeat(),
                           built.op_seeds)
  if distributed:
    raise _not_distributable(where)
  return op_seeds.record(graph_input.stream(built), built.op_seeds)


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
