"""One mode of a legacy model_fn, traced once, run as pruned functions.

The model_fn is traced a single time with `tf.compat.v1.wrap_function` (TF1
semantics: no automatic control dependencies), its variables held eagerly by
`VariableCapture` under their legacy names. Each step then runs a function
pruned from that graph to exactly what is fetched, like `Session.run`: an
EVAL model_fn that also builds a train_op does not train, and hooks can fetch
any tensor of the graph, including ones their `begin()` created there.
"""

from typing import Any, Callable, Dict, Iterable, Optional, Tuple

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import wrap_function as wrap_lib
from tensorflow.python.framework import func_graph
from tensorflow.python.training import training_util

from estimator_compat.engines.function.session import (
    UnsupportedOnFunctionEngine, GRAPH_ENGINE_FIX)
from estimator_compat.engines.function.legacy_updates import (
    layer_updates_in_collection)
from estimator_compat.engines.function.variables import VariableCapture
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.model_fn_call import ModelSetup, call_model_fn
from estimator_compat.spec import EstimatorSpec

LOSS = "__loss__"


def split_spec(element_spec: Any):
  """(features spec, labels spec or None) of a dataset element."""
  if isinstance(element_spec, tuple) and len(element_spec) == 2:
    return element_spec
  return element_spec, None


class TracedModel:
  """The model_fn of one mode, traced once, run by fetch set.

  Args:
    setup: the Estimator's model setup.
    mode: a ModeKeys value.
    dataset: the input; the step functions read it through an iterator
      inside the graph (no per-step trip through Python).
    build_fn: called inside the trace with the EstimatorSpec; returns the
      named tensors or ops that every step fetches (and may build hooks and
      call their begin() there).
  """

  def __init__(self, setup: ModelSetup, mode: str, dataset: tf.data.Dataset,
               build_fn: Callable[[EstimatorSpec], Dict[str, Any]]):
    self._setup = setup
    self._mode = mode
    self._build_fn = build_fn
    self.capture = VariableCapture()
    self._has_labels = split_spec(dataset.element_spec)[1] is not None
    with tf.device("/cpu:0"):
      self._iterator = iter(dataset)
    self.spec: Optional[EstimatorSpec] = None
    self.read_tensor_name: Optional[str] = None
    self._fetches: Dict[str, Any] = {}
    # What tf.compat.v1.wrap_function does, minus its variable holder (our
    # VariableCapture creates the variables; the holder's creator breaks
    # tf-keras functional models such as Sequential(input_shape=...)).
    graph = func_graph.func_graph_from_py_func(
        "estimator_model_fn", self._trace, args=(), kwargs={},
        add_control_dependencies=False, collections={})
    self._wrapped = wrap_lib.WrappedFunction(
        graph, variable_holder=wrap_lib.VariableHolder(share_variables=False))
    self.graph = self._wrapped.graph
    self._pruned: Dict[Any, Any] = {}
    self._loops: Dict[Any, Any] = {}

  def _trace(self):
    graph = tf.compat.v1.get_default_graph()
    with self.capture.scope(self._setup.config.tf_random_seed), (
        layer_updates_in_collection()):
      global_step = tf.compat.v1.train.get_or_create_global_step()
      # The read tensor the standard hooks look up (TF's helper needs a graph
      # variable; this one is held eagerly).
      with tf.name_scope("global_step/"):
        read = tf.identity(global_step.read_value(), name="read_for_hooks")
      graph.add_to_collection(training_util.GLOBAL_STEP_READ_KEY, read)
      self.read_tensor_name = read.name
      # The model consumes the batch only after that read, so hooks see the
      # step before this step's increment (no race, unlike a TF1 session).
      with tf.device("/cpu:0"), tf.control_dependencies([read]):
        element = tf.nest.map_structure(
            lambda t: tf.identity(t) if isinstance(t, tf.Tensor) else t,
            self._iterator.get_next())
      features, labels = element if self._has_labels else (element, None)
      labels = labels if self._mode != ModeKeys.PREDICT else None
      self.spec = call_model_fn(self._setup, features, labels, self._mode)
      fetches = dict(self._build_fn(self.spec))
      if self.spec.loss is not None:
        fetches[LOSS] = self.spec.loss
      self._fetches = {k: v for k, v in fetches.items() if v is not None}

  def _lookup(self, key: str):
    kind, name = key.split(":", 1)
    try:
      if kind == "op":
        return self.graph.get_operation_by_name(name)
      return self.graph.get_tensor_by_name(name)
    except KeyError:
      raise UnsupportedOnFunctionEngine(
          f"A hook asked for {name!r}, which is not in the model's graph. "
          f"{GRAPH_ENGINE_FIX}") from None

  def _function(self, keys: Tuple[str, ...]):
    function = self._pruned.get(keys)
    if function is None:
      fetches = dict(self._fetches)
      fetches.update({key: self._lookup(key) for key in keys})
      function = self._wrapped.prune([], fetches)
      self._pruned[keys] = function
    return function

  def step(self, keys: Iterable[str] = (), num_steps: int = 1
          ) -> Dict[str, Any]:
    """Runs `num_steps` steps on the next batches in one call.

    The first num_steps - 1 steps fetch only what every step fetches; the
    last one also fetches `keys` and its outputs are returned.

    Raises:
      tf.errors.OutOfRangeError: the input is exhausted.
    """
    keys = tuple(sorted(k for k in keys if not k.startswith("var:")))
    if num_steps == 1:
      return self._function(keys)()
    loop = self._loops.get(keys)
    if loop is None:
      plain, fetching = self._function(()), self._function(keys)

      def run_loop(n):
        for _ in tf.range(n - 1):
          plain()
        return fetching()

      loop = tf.function(run_loop)
      self._loops[keys] = loop
    return loop(tf.constant(num_steps, tf.int64))

  def run_without_input(self, fetches: Dict[str, Any]) -> Dict[str, Any]:
    """Evaluates graph tensors that depend on variables only (no input).

    Raises:
      ValueError: a fetch depends on the input batch.
    """
    try:
      function = self._wrapped.prune([], fetches)
    except ValueError as e:
      raise ValueError(
          "An eval metric value depends on the input batch, so it cannot be "
          "read after the evaluation loop. Fix: compute metric values from "
          "metric variables (tf.compat.v1.metrics.*), or use the graph engine "
          "(RunConfig(engine='graph')).") from e
    return function()
