"""One set of legacy variables, shared by every trace of a model_fn.

A ModelFnModule traces its model_fn once per mode and input signature. Each
trace asks for its variables again (`get_variable`, v1 layers, Keras layers,
optimizer slots, `global_step`, metric variables); `LegacyVariableStore`
answers every request by the variable's legacy name: the first request
creates the variable eagerly (outside of any function, so that it lives as
long as the module), later ones get the same object back after a shape
check. Unlike the function engine's `VariableCapture` (which matches by
creation order within one mode), traces of different modes may ask for
different subsets: TRAIN adds slots and `global_step`, EVAL metric variables.
"""

import contextlib
from typing import Any, Dict, Iterator, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.ops import resource_variable_ops
from tensorflow.python.ops import variable_scope

from estimator_compat.engines.function import checkpoint_initializers
from estimator_compat.engines.function.variables import (
    is_global_variable, legacy_name, register_in_collections)

_EAGER_KWARGS = ("initial_value", "trainable", "validate_shape",
                 "caching_device", "name", "dtype", "constraint",
                 "synchronization", "aggregation", "shape")


class LegacyVariableStore:
  """Creates each legacy variable once; hands it back by name after."""

  def __init__(self):
    self._variables: Dict[str, tf.Variable] = {}
    self._local = set()
    self._creating = False
    self._seeded = False
    self._strategy_stack = []
    self._replica: Optional[int] = None
    self._aliases: Dict[Any, tf.Variable] = {}

  def by_name(self) -> Dict[str, tf.Variable]:
    """Every variable by legacy name (no ':0'), in creation order."""
    return dict(self._variables)

  def saveable_by_name(self) -> Dict[str, tf.Variable]:
    """What the Estimator's checkpoints hold: all but local (metric) ones."""
    return {name: v for name, v in self._variables.items()
            if name not in self._local}

  def local_variables(self):
    """Variables outside GLOBAL_VARIABLES (v1 metric totals and counts)."""
    return [self._variables[name] for name in self._local]

  @contextlib.contextmanager
  def scope(self, seed: Optional[int] = None,
            replica: Optional[int] = None) -> Iterator[None]:
    """Wraps one trace: fresh collections and v1 store, our creator.

    Args:
      seed: the graph-level seed (RunConfig.tf_random_seed); also seeds the
        eager random stream before the first variable is created, since
        variables are initialized eagerly.
      replica: for a trace run by one of several replicas on this worker,
        its local index: the model_fn then gets that replica's copy of each
        mirrored variable (outside of strategy.run, the first copy).
    """
    self._replica = replica
    graph = tf.compat.v1.get_default_graph()
    keys = list(graph.get_all_collection_keys())
    keys += [variable_scope._VARSCOPESTORE_KEY, variable_scope._VARSTORE_KEY]  # pylint: disable=protected-access
    for key in keys:
      graph.clear_collection(key)
    graph.seed = seed
    if seed is not None and not self._seeded and not self._variables:
      with tf.init_scope():
        tf.keras.utils.set_random_seed(seed)
    self._seeded = True
    # The model_fn runs as under the Estimator, outside of any strategy the
    # caller is in: its v1 optimizer applies this replica's gradients itself
    # (ModelFnModule refuses train_step where that would not be faithful).
    # Variables are still created by the strategy (see _creator).
    self._strategy_stack = graph._distribution_strategy_stack  # pylint: disable=protected-access
    graph._distribution_strategy_stack = []  # pylint: disable=protected-access
    created = len(self._variables)
    try:
      with variable_scope.with_variable_store(variable_scope._VariableStore()):  # pylint: disable=protected-access
        with tf.variable_creator_scope(self._creator):
          yield
      self._initialize_from_checkpoints(list(self._variables)[created:])
    finally:
      graph._distribution_strategy_stack = self._strategy_stack  # pylint: disable=protected-access

  def _initialize_from_checkpoints(self, names) -> None:
    """model_fn's init_from_checkpoint, for the variables this trace made.

    As in a TF1 graph, the request replaces a variable's initial value; a
    module initializes each variable once, when a trace first makes it, so
    a later trace's request finds it initialized (and trained) and leaves
    it alone. A mirrored variable's request is on the replica copy's alias
    the trace got; the assign writes every copy.
    """
    for name in names:
      variable = self._variables[name]
      asked = [variable] + [alias for (alias_name, _), alias
                            in self._aliases.items() if alias_name == name]
      reads = [read for read in map(checkpoint_initializers.requested, asked)
               if read is not None]
      if reads and not checkpoint_initializers.plain_or_mirrored(variable):
        raise ValueError(
            f"tf.compat.v1.train.init_from_checkpoint sets the initial value "
            f"of {name!r}, a parameter server's variable, which ModelFnModule "
            "cannot initialize from a checkpoint. Fix: restore the module "
            "from that checkpoint instead (restore_legacy_checkpoint).")
      if reads:
        checkpoint_initializers.assign(variable, reads[-1])

  def _creator(self, next_creator, **kwargs):
    if self._creating:
      return next_creator(**kwargs)
    initial_value = kwargs.get("initial_value")
    if tf.is_tensor(initial_value) and not callable(initial_value) and (
        hasattr(initial_value, "graph")) and not tf.executing_eagerly():
      raise ValueError(
          f"Variable {kwargs.get('name')!r} is initialized from a tensor "
          "computed inside model_fn, which ModelFnModule cannot lift out of "
          "the traced model_fn. Fix: pass an initializer "
          "(tf.compat.v1.get_variable(name, shape, initializer=...)).")
    args = {k: kwargs[k] for k in _EAGER_KWARGS if kwargs.get(k) is not None}
    graph = tf.compat.v1.get_default_graph()
    hidden = graph._distribution_strategy_stack  # pylint: disable=protected-access
    self._creating = True
    # init_scope keeps this graph as the default one (the eager context has
    # no graph of its own): the caller's strategy, if any, creates it.
    graph._distribution_strategy_stack = self._strategy_stack  # pylint: disable=protected-access
    try:
      with tf.init_scope():
        variable = self._existing_or_new(args, is_global_variable(kwargs))
    finally:
      graph._distribution_strategy_stack = hidden  # pylint: disable=protected-access
      self._creating = False
    if not is_global_variable(kwargs):
      self._local.add(legacy_name(variable))
    copies = getattr(variable, "values", None)
    if copies and len(copies) > 1:
      variable = self._alias(variable, copies)
    register_in_collections(variable, kwargs)
    return variable

  def _alias(self, variable, copies) -> tf.Variable:
    """One replica's copy of a mirrored variable, as a plain variable.

    With several copies on this worker, the trace reads and writes the copy
    of the replica it is for (the first outside of strategy.run). The copy
    itself would take the model_fn's v1 optimizer back to the distributed
    wrapper (which it cannot use without the strategy), so the trace gets a
    plain variable over the copy's resource: same handle, same values.
    """
    index = (self._replica or 0) % len(copies)
    key = (legacy_name(variable), index)
    alias = self._aliases.get(key)
    if alias is None:
      copy = copies[index]
      with tf.init_scope():
        alias = resource_variable_ops.BaseResourceVariable(
            trainable=copy.trainable, shape=copy.shape, dtype=copy.dtype,
            # Named as the legacy variable (copies are "x/replica_1"), so
            # that slots and checkpoints find it by that name.
            handle=copy.handle, name=key[0] + ":0",
            unique_id=copy._unique_id,  # pylint: disable=protected-access
            handle_name=key[0], in_graph_mode=False,
            synchronization=copy.synchronization,
            aggregation=copy.aggregation)
      self._aliases[key] = alias
    return alias

  def _existing_or_new(self, args, is_global: bool) -> tf.Variable:
    # The name the variable would get (name scopes included): an existing
    # variable of that name is handed back without creating another.
    wanted = args.get("name")
    if wanted is not None:
      name = _scoped_name(str(wanted))
      existing = self._variables.get(name)
      if existing is not None:
        return self._checked(existing, args)
    if is_global:
      variable = tf.Variable(**args)
    else:
      # Local (v1 metric) variables are this worker's own, as under the
      # Estimator: plain variables, whatever strategy is around.
      variable = resource_variable_ops.ResourceVariable(**args)
    name = legacy_name(variable)
    existing = self._variables.get(name)
    if existing is not None:
      return self._checked(existing, args)
    self._variables[name] = variable
    return variable

  @staticmethod
  def _checked(variable: tf.Variable, args) -> tf.Variable:
    shape = args.get("shape")
    if shape is not None and tf.TensorShape(shape).is_fully_defined() and (
        tf.TensorShape(shape) != variable.shape):
      raise ValueError(
          f"model_fn asked for variable {legacy_name(variable)!r} with shape "
          f"{tf.TensorShape(shape)}, but an earlier trace created it with "
          f"shape {variable.shape}. ModelFnModule keeps one variable per "
          "legacy name across modes and inputs. Fix: give the input the same "
          "feature shape in every call.")
    return variable


def _scoped_name(name: str) -> str:
  """`name` in the current (eager) name scope, as tf.Variable names it."""
  with tf.name_scope(name.split(":")[0]) as scope:
    return scope.rstrip("/")
