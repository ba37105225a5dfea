"""One mode of a model_fn, traced once for one input signature.

The trace is a TF1 graph inside a function (`func_graph_from_py_func` with
no automatic control dependencies, as the function engine's TracedModel):
the model_fn runs under TF1 semantics, so a train_op runs exactly what it
depends on (a train_op that forgets UPDATE_OPS does not update the moving
averages, as under the Estimator). Each call runs a function pruned from
that graph to what is asked for. The variables live outside, in a
LegacyVariableStore, and are captured by the graph; the pruned functions can
be called eagerly, inside tf.function and inside strategy.run, and are
differentiable (GradientTape sees the variables they read).
"""

from typing import Any, Dict, List, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import wrap_function as wrap_lib
from tensorflow.python.framework import func_graph

from estimator_compat.front import tf_logging as logging
from estimator_compat.adapters.variable_store import LegacyVariableStore
from estimator_compat.engines import graph as graph_engine
from estimator_compat.engines.function.fetches import (as_graph_fetch,
                                                       reached_ops)
from estimator_compat.engines.function import scaffold_fields
from estimator_compat.engines.function.legacy_updates import (
    layer_updates_in_collection)
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine
from estimator_compat.errors import GUARD_WARNING
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import ModelSetup, call_model_fn

_CALLS = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate",
          ModeKeys.PREDICT: "predict"}
_ASSIGNS = ("AssignAddVariableOp", "AssignVariableOp", "AssignSubVariableOp")


def relaxed_spec(value: Any) -> Any:
  """The TypeSpec of one input value (or spec), batch dimension left open."""
  spec = value if isinstance(value, tf.TypeSpec) else tf.type_spec_from_value(
      value)
  if isinstance(spec, tf.TensorSpec) and spec.shape.rank:
    return tf.TensorSpec([None] + spec.shape[1:].as_list(), spec.dtype)
  if isinstance(spec, tf.SparseTensorSpec) and spec.shape.rank:
    return tf.SparseTensorSpec([None] + spec.shape[1:].as_list(), spec.dtype)
  return spec


def as_input_values(structure: Any) -> Any:
  """numpy arrays and Python numbers as tensors; tensors kept."""
  def convert(value):
    if value is None or isinstance(value, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor)):
      return value
    return tf.convert_to_tensor(value)
  return tf.nest.map_structure(convert, structure)


class TracedCall:
  """The model_fn of one mode and input signature, traced once.

  Args:
    setup: model_fn, params and config.
    store: the module's variables.
    mode: a ModeKeys value.
    signature: signature_for(features, labels).
    replica: the local index of the replica this trace is for, when this
      worker runs several (each reads its own copies of the variables).

  Attributes:
    spec: the EstimatorSpec the model_fn returned in the trace.
    increments_global_step: whether the train_op advances global_step.
  """

  def __init__(self, setup: ModelSetup, store: LegacyVariableStore,
               mode: str, signature: Any, replica: Optional[int] = None):
    self._setup = setup
    self._replica = replica
    self._store = store
    self._mode = mode
    self._signature = signature
    self._fetches: Dict[str, Any] = {}
    self._metric_values: Dict[str, Any] = {}
    self._pruned: Dict[Any, Any] = {}
    self.spec = None
    self.increments_global_step = True
    flat = tf.nest.flatten(signature, expand_composites=True)
    graph = func_graph.func_graph_from_py_func(
        f"legacy_model_fn_{mode}", self._body, args=None, kwargs=None,
        signature=flat, add_control_dependencies=False, collections={})
    self._wrapped = wrap_lib.WrappedFunction(
        graph, variable_holder=wrap_lib.VariableHolder(share_variables=False))
    self.graph = self._wrapped.graph
    self._feeds = list(self.graph.inputs[:len(flat)])
    if mode == ModeKeys.TRAIN and self.spec.train_op is not None:
      self.increments_global_step = self._train_op_increments_step()
      if not self.increments_global_step:
        logging.warning(GUARD_WARNING)

  def _body(self, *flat):
    graph = tf.compat.v1.get_default_graph()
    inputs = tf.nest.pack_sequence_as(self._signature, list(flat),
                                      expand_composites=True)
    features = inputs["features"]
    labels = None if self._mode == ModeKeys.PREDICT else inputs.get("labels")
    with self._store.scope(self._setup.config.tf_random_seed,
                           self._replica), layer_updates_in_collection():
      tf.compat.v1.train.get_or_create_global_step()
      spec = call_model_fn(self._setup, features, labels, self._mode)
      _check_session_parts(spec, self._mode)
      self.spec = spec
      fetches = {"loss": spec.loss, "predictions": spec.predictions}
      if self._mode == ModeKeys.TRAIN:
        fetches["train_op"] = spec.train_op
        updates = graph.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        fetches["update_ops"] = tf.group(*updates) if updates else None
      if self._mode == ModeKeys.EVAL:
        values, update = graph_engine.metric_ops(spec)
        fetches["metric_update"] = update
        self._metric_values = {k: as_graph_fetch(v, graph)
                               for k, v in values.items()}
      self._fetches = {k: tf.nest.map_structure(
          lambda v: as_graph_fetch(v, graph), v)
                       for k, v in fetches.items() if v is not None}

  def _train_op_increments_step(self) -> bool:
    """Whether the train_op writes global_step (by data or control)."""
    step = self._store.by_name()["global_step"]
    # A distributed variable's copies (the trace read the first one).
    outer = [copy.handle for copy in getattr(step, "values", (step,))]
    handles = [internal for external, internal in self.graph.captures
               if any(external is h for h in outer)]
    for op in reached_ops([self._fetches["train_op"]]):
      if op.type in _ASSIGNS or op.type.startswith("ResourceApply"):
        if any(t is h for t in op.inputs[:1] for h in handles):
          return True
    return False

  def has(self, key: str) -> bool:
    return key in self._fetches

  def _function(self, keys: tuple, with_inputs: bool = True):
    function = self._pruned.get((keys, with_inputs))
    if function is None:
      if with_inputs:
        fetches = {k: self._fetches[k] for k in keys}
        function = self._wrapped.prune(self._feeds, fetches)
      else:
        function = self._wrapped.prune([], self._metric_values)
      self._pruned[(keys, with_inputs)] = function
    return function

  def run(self, keys: List[str], features: Any, labels: Any) -> Dict[str, Any]:
    """The values of `keys` (of loss, predictions, train_op, ...) for a batch.

    Operations (train_op, update_ops, metric_update) run and give None.
    """
    keys = tuple(k for k in keys if k in self._fetches)
    values = tf.nest.flatten(_inputs(features, labels), expand_composites=True)
    return self._function(keys)(*values)

  def metric_values(self) -> Dict[str, Any]:
    """The eval metrics' current values (their variables' state)."""
    return self._function((), with_inputs=False)()



def _check_session_parts(spec: Any, mode: str) -> None:
  """Refuses Scaffold fields that need a Session; warns about its hooks.

  Raises:
    ValueError: the Scaffold initializes, restores or checks the model in a
      TF1 Session (init_fn, init_op, a custom saver, ...), which a TF2 loop
      cannot do for it.
  """
  try:
    scaffold_fields.check(spec.scaffold, _CALLS[mode])
  except NeedsGraphEngine as error:
    reason = str(error).replace(GRAPH_ENGINE_FIX, "").strip()
    raise ValueError(
        f"ModelFnModule cannot honour the model_fn's Scaffold: {reason} "
        "A TF2 loop has no TF1 Session. Fix: do that work before the loop "
        "(e.g. module.load_legacy_checkpoint for a restore), or keep this "
        "model_fn on the Estimator.") from error
  hooks = {"training_hooks": spec.training_hooks,
           "training_chief_hooks": spec.training_chief_hooks,
           "evaluation_hooks": spec.evaluation_hooks,
           "prediction_hooks": spec.prediction_hooks}
  given = sorted(name for name, value in hooks.items() if value)
  if given:
    logging.warning(
        "ModelFnModule does not run the EstimatorSpec's %s (SessionRunHooks "
        "need a TF1 Session; a TF2 loop has none). Do their work in your "
        "loop, or keep this model_fn on the Estimator.", ", ".join(given))


def _inputs(features: Any, labels: Optional[Any]) -> Dict[str, Any]:
  if labels is None:
    return {"features": features}
  return {"features": features, "labels": labels}


def signature_for(features: Any, labels: Optional[Any]) -> Dict[str, Any]:
  """The relaxed signature a batch is traced under (labels left out if None).
  """
  return tf.nest.map_structure(relaxed_spec, _inputs(features, labels))
