"""Keeps TF1-style variables alive across tf.function traces.

A legacy model_fn creates its variables every time it is called
(`get_variable`, `tf.compat.v1.layers`, Keras layers, v1 optimizer slots,
`global_step`, metric variables). Inside `tf.function` that fails: the
function's own creator allows variables only on the first trace, the v1
variable store is shared with the outer graph, and collections are dropped.
`VariableCapture` answers each creation request itself: on the first trace it
creates the variable eagerly (lifted out of the function) under its legacy
name; on later traces it hands back the same object, matched by creation
order and checked by name and shape. Each returned variable is registered in
the trace's collections, so `minimize()`, `global_variables()` and
`get_global_step()` see them as in a graph.
"""

import contextlib
from typing import Dict, Iterator, List, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.framework import ops
from tensorflow.python.ops import variable_scope

from estimator_compat.engines.function import (checkpoint_initializers,
                                               keras_networks, op_seeds,
                                               outside_variables)
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine

_GraphKeys = tf.compat.v1.GraphKeys
# TensorFlow's eager refusal of a constant whose size differs from its shape.
_CONSTANT_SIZE_ERROR = "Eager execution of tf.constant with unsupported shape"
_EAGER_KWARGS = ("initial_value", "trainable", "validate_shape",
                 "caching_device", "name", "dtype", "constraint",
                 "synchronization", "aggregation", "shape")


def _replica_id() -> int:
  """This replica's index inside strategy.run; 0 outside of it."""
  context = tf.distribute.get_replica_context()
  if context is None:
    return 0
  replica_id = context.replica_id_in_sync_group
  return replica_id if isinstance(replica_id, int) else 0


def _tf1_control_flow_scope() -> Optional[str]:
  """The name scope a TF1 graph had here, inside a tf.cond or loop body.

  Where TensorFlow executes eagerly outside functions (around the function
  engine's trace), a cond branch or loop body graph starts in the name scope
  of the op that holds it (`cond/`); in the Estimator's TF1 graph it started
  at the root. A variable made there under init_scope (a v1 optimizer's
  `beta1_power` when apply_gradients runs in a tf.cond, as gradient
  accumulation and loss scaling do) took that scope in its name.

  Returns:
    The absolute scope (`inner/`, or "" for the root) to make a variable
    under, or None outside control flow.
  """
  graph = tf.compat.v1.get_default_graph()
  if not getattr(graph, "is_control_flow_graph", False):
    return None
  scope, inherited = graph.get_name_scope(), graph.outer_graph.get_name_scope()
  if not inherited or not (scope == inherited or
                           scope.startswith(inherited + "/")):
    return None
  own = scope[len(inherited):].strip("/")
  return own + "/" if own else ""


def legacy_name(variable) -> str:
  """A captured variable's name without ':0' (a partitioned one's base)."""
  if type(variable).__name__ == "ShardedVariable":
    first = variable.variables[0].name.split(":")[0]
    return first[:-len("/part_0")] if first.endswith("/part_0") else first
  return variable.name.split(":")[0]


def is_tf1_creation(kwargs) -> bool:
  """Whether a creator was called by a TF1 creation, which honours collections.

  `tf.compat.v1.Variable` (and so `get_variable` and tf-keras weights)
  always hands the creators `use_resource` and `expected_shape`; the TF2
  `tf.Variable` never does, and passes its other keyword arguments on
  unread: in a TF1 graph `tf.Variable(..., collections=[LOCAL_VARIABLES])`
  made a global (saved) variable, under TF 2.15 as under TF 2.21.
  """
  return "use_resource" in kwargs and "expected_shape" in kwargs


def tf1_collections(kwargs) -> Optional[List[str]]:
  """The collections a TF1 graph put the variable in (None: the default)."""
  return kwargs.get("collections") if is_tf1_creation(kwargs) else None


def is_global_variable(kwargs) -> bool:
  """Whether a TF1 Saver saved the variable: it is in GLOBAL_VARIABLES.

  `collections=None` means GLOBAL_VARIABLES; `collections=[]` (Keras
  metrics) means none, so such a variable is not checkpointed.
  """
  collections = tf1_collections(kwargs)
  return collections is None or _GraphKeys.GLOBAL_VARIABLES in collections


class VariableCapture:
  """Creates a model's variables once and returns them on every trace."""

  def __init__(self):
    self._variables: List[tf.Variable] = []
    self._built = False
    self._next = 0
    self._inside = False
    self._local = set()
    # Legacy names of the saved (not local) variables made so far.
    self._saved_names = set()
    self._fresh_kernels = True
    # Sequentials built on their first call, on the first trace.
    self._deferred = {}
    # The outermost tf-keras calls that made variables (name -> layer id),
    # and the names a second layer made variables under.
    self._keras_roots: Dict[str, int] = {}
    self._keras_reused: List[str] = []

  @property
  def variables(self) -> List[tf.Variable]:
    """Every captured variable, in creation order."""
    return list(self._variables)

  def by_name(self) -> Dict[str, tf.Variable]:
    """Captured variables by legacy name (no ':0'), as checkpoints name them."""
    return {legacy_name(v): v for v in self._variables}

  def saveable_by_name(self) -> Dict[str, tf.Variable]:
    """The variables a checkpoint holds: all but local (e.g. metric) ones."""
    return {name: v for name, v in self.by_name().items()
            if id(v) not in self._local}

  @contextlib.contextmanager
  def scope(self, seed=None, seed_eagerly: bool = True) -> Iterator[None]:
    """Wraps one trace of the model: fresh collections, store, creator.

    Args:
      seed: the graph-level seed (tf_random_seed).
      seed_eagerly: also seed the eager random stream before the first
        creation; callers that trace while other threads use the eager
        context (a ClusterCoordinator) seed before and pass False.
    """
    graph = tf.compat.v1.get_default_graph()
    # Detach from the outer graph's lists (FuncGraph shares some of them),
    # including the v1 scope store, whose counters make `dense_1` names.
    keys = list(graph.get_all_collection_keys())
    keys += [variable_scope._VARSCOPESTORE_KEY, variable_scope._VARSTORE_KEY]  # pylint: disable=protected-access
    for key in keys:
      graph.clear_collection(key)
    graph.seed = seed
    if seed is not None and seed_eagerly and not self._built:
      # Variables are initialized eagerly, where the graph-level seed does not
      # reach: seed the eager random stream so runs with the same
      # tf_random_seed start from the same values.
      with tf.init_scope():
        tf.keras.utils.set_random_seed(seed)
    self._next = 0
    # Clearing eager kernels while a ClusterCoordinator's threads run
    # deadlocks, as seeding does (see fresh_kernel_for).
    self._fresh_kernels = seed_eagerly
    with variable_scope.with_variable_store(variable_scope._VariableStore()):  # pylint: disable=protected-access
      with tf.variable_creator_scope(self._creator):
        yield
    if self._built and self._next != len(self._variables):
      raise ValueError(
          f"model_fn created {self._next} variables in this trace but "
          f"{len(self._variables)} in the first one. The function engine "
          "needs a model_fn that builds the same variables on every call. "
          "Fix: remove the condition around variable creation, or use the "
          "graph engine (RunConfig(engine='graph')).")
    if not self._built:  # The trace that made them: see check().
      checkpoint_initializers.check(self._variables, self._local)
      deferred, self._deferred = self._deferred, {}
      keras_networks.check(deferred, graph)
      reused, self._keras_roots, self._keras_reused = (
          self._keras_reused, {}, [])
      keras_networks.check_named_calls(reused)
    self._built = True

  def _creator(self, next_creator, **kwargs):
    if self._inside:  # Our own eager creation below: let TensorFlow do it.
      return next_creator(**kwargs)
    if _replica_id() > 0:
      # Inside strategy.run, replica 0 creates (through us, once); the
      # strategy's own creator hands other replicas that variable by name.
      variable = next_creator(**kwargs)
      register_in_collections(variable, kwargs)
      return variable
    if not self._built:
      variable = self._create(kwargs, next_creator)
      if is_global_variable(kwargs):
        self._check_unique_name(variable)
      outside_variables.made_by_model_fn(variable)
      self._variables.append(variable)
      mark_per_replica_copies(variable, kwargs)
      if not is_global_variable(kwargs):
        self._local.add(id(variable))
    else:
      variable = self._reuse(kwargs)
    self._next += 1
    register_in_collections(variable, kwargs)
    return variable

  def _check_unique_name(self, variable) -> None:
    """NeedsGraphEngine if a saved variable of this name exists already.

    A TF1 graph made a second variable's name unique (`fc_1/kernel` for a
    second tf-keras layer named `fc`, whose graph-mode class took a unique
    name scope; `dense/kernel_1` for a tf.compat.v1.layers layer whose
    scope met a tf-keras layer's). Eager variables keep the name asked for,
    so a checkpoint would hold one of the two and restore it into both.
    """
    name = legacy_name(variable)
    if name in self._saved_names:
      raise NeedsGraphEngine(
          f"model_fn makes a second variable named {name!r} (e.g. two "
          "tf-keras layers given the same name, or a tf-keras layer and a "
          "tf.compat.v1.layers layer whose names meet). The Estimator's TF1 "
          "graph made the second name unique (`..._1`), which the function "
          "engine cannot reproduce: its checkpoint would hold only one of "
          f"them. {GRAPH_ENGINE_FIX}")
    self._saved_names.add(name)

  def _create(self, kwargs, next_creator) -> tf.Variable:
    initial_value = kwargs.get("initial_value")
    if tf.is_tensor(initial_value) and not callable(initial_value) and (
        not tf.executing_eagerly()) and hasattr(initial_value, "graph"):
      # Found on the first trace, while the call is set up.
      raise NeedsGraphEngine(
          f"Variable {kwargs.get('name')!r} is initialized from a tensor "
          "computed inside model_fn, which the function engine cannot lift "
          "out of its step function (to run it there instead, pass an "
          "initializer: tf.compat.v1.get_variable(name, shape, "
          f"initializer=...)). {GRAPH_ENGINE_FIX}")
    if self._fresh_kernels:
      op_seeds.fresh_kernel_for(initial_value)
    keras_networks.note_creation(self._deferred)
    keras_networks.note_named_call(self._keras_roots, self._keras_reused)
    if tf.distribute.in_cross_replica_context() is False and (
        tf.distribute.has_strategy()):
      # Replica 0 inside strategy.run: the creators below ours (the
      # strategy's) make the distributed variable. A fresh tf.Variable call
      # would pass the replica's shared-variable creator a second time and
      # register the variable twice, so that other replicas pick wrong ones.
      # Made eagerly, it is no variable of the trace: without lifting (here
      # and below), the creator of a tf.function being traced lets it
      # through unrecorded, so the function keeps its first trace (recorded
      # variables made it trace model_fn a second time: parameter servers).
      with tf.init_scope():
        return next_creator(
            **dict(kwargs, experimental_enable_variable_lifting=False))
    args = {k: kwargs[k] for k in _EAGER_KWARGS if kwargs.get(k) is not None}
    if callable(args.get("caching_device")):
      # A device function (tf.compat.v1.nn.dynamic_rnn's scope sets
      # `lambda op: op.device`: cache reads where the variable is) places a
      # TF1 graph's cached reads; eager execution refuses one, and the value
      # does not depend on it.
      del args["caching_device"]
    scope = _tf1_control_flow_scope()
    self._inside = True
    try:
      with tf.init_scope(), (
          contextlib.nullcontext() if scope is None
          else ops.name_scope(scope, skip_on_eager=False)):
        return tf.Variable(**args, experimental_enable_variable_lifting=False)
    except TypeError as error:
      if _CONSTANT_SIZE_ERROR not in str(error):
        raise
      # E.g. constant_initializer([1., 2.]) for a shape [3] variable: a TF1
      # graph repeated the last value ([1., 2., 2.]), or raised ValueError
      # for too many; eager execution refuses both.
      raise NeedsGraphEngine(
          f"Variable {kwargs.get('name')!r} is initialized with a constant "
          "of another number of elements than its shape holds, which a TF1 "
          "graph filled by repeating the last value and eager execution "
          f"refuses. {GRAPH_ENGINE_FIX}") from error
    finally:
      self._inside = False

  def _reuse(self, kwargs) -> tf.Variable:
    if self._next >= len(self._variables):
      raise ValueError(
          f"model_fn created variable {kwargs.get('name')!r} that the first "
          "trace did not create. The function engine needs a model_fn that "
          "builds the same variables on every call. Fix: build them "
          "unconditionally, or use the graph engine "
          "(RunConfig(engine='graph')).")
    variable = self._variables[self._next]
    wanted = kwargs.get("name")
    base = legacy_name(variable)
    wanted = None if wanted is None else str(wanted).split(":")[0].rstrip("/")
    if wanted and not base.endswith(wanted):
      raise ValueError(
          f"model_fn created variables in another order than on its first "
          f"trace: expected {base!r}, got {wanted!r}. Fix: build variables "
          "in a fixed order, or use the graph engine "
          "(RunConfig(engine='graph')).")
    return variable


# Set on a mirrored variable whose copies a checkpoint holds one by one.
PER_REPLICA_SAVE = "_estimator_compat_saved_per_replica"


def mark_per_replica_copies(variable, kwargs) -> None:
  """Marks a mirrored `tf.Variable` (TF2 API) to be saved per replica.

  In the Estimator's TF1 graph a MirroredStrategy put each copy of a
  variable made with `tf.Variable` (a Keras optimizer's slots, the v2
  Baseline's bias) into GLOBAL_VARIABLES, so its Saver wrote `name` and
  `name/replica_1`, ...; `get_variable`, `tf.compat.v1.Variable` and Keras
  layer weights (TF1 calls, which pass `collections`) were saved once.
  """
  copies = getattr(variable, "values", None)
  if not is_tf1_creation(kwargs) and copies and len(copies) > 1:
    setattr(variable, PER_REPLICA_SAVE, True)


def register_in_collections(variable: tf.Variable, kwargs) -> None:
  """Adds a variable to the trace's collections, as TF1 creation did."""
  collections = tf1_collections(kwargs)
  collections = list([_GraphKeys.GLOBAL_VARIABLES] if collections is None
                     else collections)
  # A partitioned variable (ShardedVariable, parameter-server training) is
  # registered as its shards, as TF1 registered a PartitionedVariable's
  # parts: optimizers then update (and create slots for) each shard.
  parts = list(getattr(variable, "variables", None) or [variable]) if (
      type(variable).__name__ == "ShardedVariable") else [variable]
  # A variable made with no initial value is filled by the code that made
  # it: tf.saved_model.load's UninitializedVariable, which in a TF1 graph
  # joined GLOBAL_VARIABLES only, so minimize() did not train it.
  made_to_be_filled = kwargs.get("initial_value") is None and kwargs.get(
      "variable_def") is None
  if kwargs.get("trainable", True) is not False and (
      _GraphKeys.TRAINABLE_VARIABLES not in collections) and (
          getattr(parts[0], "trainable", True)) and not made_to_be_filled:
    collections.append(_GraphKeys.TRAINABLE_VARIABLES)
  graph = tf.compat.v1.get_default_graph()
  for key in collections:
    for part in parts:
      if not any(v is part for v in graph.get_collection(key)):
        graph.add_to_collection(key, part)
