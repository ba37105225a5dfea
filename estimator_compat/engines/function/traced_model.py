"""One mode of a legacy model_fn, traced once, run as pruned functions.

The model_fn is traced a single time with `tf.compat.v1.wrap_function` (TF1
semantics: no automatic control dependencies), its variables held eagerly by
`VariableCapture` under their legacy names. Each step then runs a function
pruned from that graph to exactly what is fetched, like `Session.run`: an
EVAL model_fn that also builds a train_op does not train, and hooks can fetch
any tensor of the graph, including ones their `begin()` created there.
"""

from typing import Any, Callable, Dict, Iterable, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import wrap_function as wrap_lib
from tensorflow.python.framework import func_graph
from tensorflow.python.training import training_util

from estimator_compat.engines.function.session import (
    UnsupportedOnFunctionEngine, _GRAPH_ENGINE_FIX)
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
    element_spec: the input dataset's element_spec.
    build_fn: called inside the trace with the EstimatorSpec; returns the
      named tensors or ops that every step fetches (and may build hooks and
      call their begin() there).
  """

  def __init__(self, setup: ModelSetup, mode: str, element_spec: Any,
               build_fn: Callable[[EstimatorSpec], Dict[str, Any]]):
    self._setup = setup
    self._mode = mode
    self._build_fn = build_fn
    self.capture = VariableCapture()
    features_spec, labels_spec = split_spec(element_spec)
    self._structure = ((features_spec, labels_spec) if labels_spec is not None
                       else features_spec)
    self._has_labels = labels_spec is not None
    self.spec: Optional[EstimatorSpec] = None
    self.read_tensor_name: Optional[str] = None
    self._fetches: Dict[str, Any] = {}
    # What tf.compat.v1.wrap_function does, minus its variable holder (our
    # VariableCapture creates the variables; the holder's creator breaks
    # tf-keras functional models such as Sequential(input_shape=...)).
    signature = tf.nest.flatten(self._structure)
    graph = func_graph.func_graph_from_py_func(
        "estimator_model_fn", self._trace, args=None, kwargs=None,
        signature=signature, add_control_dependencies=False, collections={})
    self._wrapped = wrap_lib.WrappedFunction(
        graph, variable_holder=wrap_lib.VariableHolder(share_variables=False),
        signature=signature)
    self.graph = self._wrapped.graph
    self._pruned: Dict[Any, Any] = {}

  def _trace(self, *flat):
    element = tf.nest.pack_sequence_as(self._structure, list(flat))
    features, labels = element if self._has_labels else (element, None)
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
          f"{_GRAPH_ENGINE_FIX}") from None

  def step(self, element: Any, keys: Iterable[str] = ()) -> Dict[str, Any]:
    """Runs one step on a dataset element; returns the named outputs."""
    keys = tuple(sorted(k for k in keys if not k.startswith("var:")))
    function = self._pruned.get(keys)
    if function is None:
      fetches = dict(self._fetches)
      fetches.update({key: self._lookup(key) for key in keys})
      function = self._wrapped.prune(self._wrapped.inputs, fetches)
      self._pruned[keys] = function
    return function(*tf.nest.flatten(element))

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
