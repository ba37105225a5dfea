"""model_fn code that runs only in a TF1 graph, found while tracing it.

Some legacy model_fn code is valid only in a TF1 Graph: it builds an
initializer op of its variables, reads a variable's graph-only attributes
(`v.op.name`) or calls a method only tf-keras's TF1 classes have. Such an
error, raised while the function engine traces the model_fn (before any step
runs or file is written), becomes NeedsGraphEngine, so that the default
engine runs the call on the graph engine, where the code works as it did
under the Estimator. TF1's identity comparison and hashing of Tensors and
Variables (`{variable: value}`, `v not in frozen`) need no other engine:
tf1_tensor_equality() gives the trace those semantics.
"""

import contextlib
import threading
import weakref
from typing import Any, Callable, Iterator, Sequence

import tensorflow as tf

from estimator_compat.engines.function.fetches import reached_ops
from estimator_compat.engines.function.session import is_eager_variable
from estimator_compat.errors import (GRAPH_ENGINE_FIX, NeedsGraphEngine,
                                     UnsupportedOnFunctionEngine)
from estimator_compat.mode_keys import ModeKeys

_CALLS = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate",
          ModeKeys.PREDICT: "predict"}
# TensorFlow's message for hashing a Tensor outside a TF1 graph (a hook's
# feed_dict built in Python).
_UNHASHABLE = "Tensor is unhashable"
# TensorFlow's function that groups variables' initializer ops (what
# tf.compat.v1.local_variables_initializer() and its kin call): the function
# engine's variables are created eagerly and have no initializer op in the
# traced graph, so it fails with a TypeError there.
_INITIALIZER_GROUP = "variables_initializer"
# tf.group() of such a variable's `.initializer` (None in the traced graph),
# e.g. Scaffold(init_op=tf.group(w.initializer)): TensorFlow's message then.
_GROUP = "group"
_NONE_IN_GROUP = "Received 'None'"
# TensorFlow's message for a graph-only attribute (`op`, `graph`, `name`,
# `consumers`) of an eager tensor, such as an eagerly created variable's
# handle: `variable.op.name` (the TF1 idiom
# `tf.compat.v1.summary.histogram(v.op.name, v)`) raises it.
_EAGER_UNDEFINED = "is undefined when eager execution is enabled"
# TF1 slot creation reads a partitioned variable's `op.name` for the slot's
# checkpoint name (tf.compat.v1.train optimizers with slots: Adagrad, Adam,
# Momentum, ...).
_SLOT_CREATION = "_create_slot_var"
# Public methods of tf-keras's graph-mode (v1) Layer and Model classes, which
# tf-keras chose in TF 2.15's TF1 graph and not in a TF2 function (its v2
# classes do not have them): `model.get_updates_for(inputs)` grouped a
# batch norm's moving-average updates into the train op.
_KERAS_V1_METHODS = ("get_updates_for", "get_losses_for")
# The ops a tf.compat.v1.train.Saver built in a graph writes with (V2 and V1
# checkpoint formats); tf.compat.v1.train.init_from_checkpoint, which the
# function engine honours, builds only RestoreV2.
_SAVER_OPS = ("SaveV2", "SaveSlices", "Save")
# Variable.load(value, session) in a graph feeds the variable's initializer,
# which the function engine's eagerly created variables do not have.
_VARIABLE_LOAD = "load"
# tensorflow_hub's hub.Module (TF1 Hub format) checks that its variable
# scope's name scope is free; in a TF2 function a tf-keras layer's name scope
# (the v1 canned DNN's input layer, building hub.text_embedding_column's
# module) has taken it, with no variable scope of that name.
_HUB_STATE_SCOPE = "was unused but the corresponding name_scope was already taken"
_NO_INITIALIZER = "'NoneType' object has no attribute 'inputs'"


class _WhileTracing:
  """A process-wide TensorFlow setting changed while any trace runs.

  The first trace to enter calls `apply()` (which returns what `undo` needs)
  and the last to leave calls `undo(that)`: traces nest, and replica threads
  trace inside their caller's scope.
  """

  def __init__(self, apply: Callable[[], Any], undo: Callable[[Any], None]):
    self._apply, self._undo = apply, undo
    self._lock = threading.Lock()
    self._users = 0
    self._saved: Any = None

  @contextlib.contextmanager
  def held(self) -> Iterator[None]:
    with self._lock:
      if self._users == 0:
        self._saved = self._apply()
      self._users += 1
    try:
      yield
    finally:
      with self._lock:
        self._users -= 1
        if self._users == 0:
          self._undo(self._saved)


def _disable_tensor_equality() -> bool:
  was = tf.Tensor._USE_EQUALITY  # pylint: disable=protected-access
  tf.compat.v1.disable_tensor_equality()
  return was


def _restore_tensor_equality(was: bool) -> None:
  if was:
    tf.compat.v1.enable_tensor_equality()


_TF1_EQUALITY = _WhileTracing(_disable_tensor_equality,
                              _restore_tensor_equality)


@contextlib.contextmanager
def tf1_tensor_equality() -> Iterator[None]:
  """TF1 graph semantics for `==`, `!=` and hash() of Tensors and Variables.

  Under the Estimator, model_fn ran in a TF1 Graph, where TensorFlow compares
  Tensors and Variables by identity and hashes them: `v not in frozen`,
  `{v: multiplier}`, `set(tf.compat.v1.global_variables())` (what
  ExponentialMovingAverage.variables_to_restore() does) all worked, and
  `labels == 1` was the Python bool `labels is 1`. In a function graph
  TensorFlow compares elementwise and refuses to hash, so that code raised
  here, or computed an elementwise result the Estimator never computed.
  Inside this scope the function engine's trace uses the TF1 semantics,
  as tf.compat.v1.disable_tensor_equality() sets them.
  """
  with _TF1_EQUALITY.held():
    yield


def _lookup_by_graph_or_eagerly() -> Callable[..., Any]:
  """Installs an Optimizer._get_non_slot_variable that falls back to the
  eager key; returns TF's own."""
  cls = tf.compat.v1.train.Optimizer
  original = cls._get_non_slot_variable  # pylint: disable=protected-access

  def lookup(optimizer, name, graph=None):
    variable = original(optimizer, name, graph)
    if variable is None and getattr(graph, "building_function", False):
      # Made while tracing: TF keyed it (name, None), as eager.
      variable = original(optimizer, name, None)
    return variable

  cls._get_non_slot_variable = lookup  # pylint: disable=protected-access
  return original


def _restore_lookup(original: Callable[..., Any]) -> None:
  tf.compat.v1.train.Optimizer._get_non_slot_variable = original  # pylint: disable=protected-access


_TF1_NON_SLOT_LOOKUP = _WhileTracing(_lookup_by_graph_or_eagerly,
                                     _restore_lookup)


@contextlib.contextmanager
def tf1_non_slot_lookup() -> Iterator[None]:
  """A v1 optimizer's non-slot variables, found by the trace's graph too.

  A tf.compat.v1.train.Optimizer keys a non-slot variable (Adam's
  `beta1_power`) by (name, graph), the graph None where TensorFlow executes
  eagerly outside functions, as around the function engine's trace. The
  Estimator's TF1 graph keyed it by that graph, and custom optimizers written
  for TF1 look it up with `self._get_non_slot_variable(name,
  graph=tf.compat.v1.get_default_graph())` outside an init_scope: here that
  found None. Inside this scope such a lookup falls back to the (name, None)
  key, the only one a trace makes, so it finds what TF1 found.
  """
  with _TF1_NON_SLOT_LOOKUP.held():
    yield


# The graphs model_fn is being called in (each with its count of calls in
# progress): a control-flow body below one of them is model_fn's own.
_MODEL_FN_GRAPHS: "weakref.WeakKeyDictionary[Any, int]" = (
    weakref.WeakKeyDictionary())
_MODEL_FN_GRAPHS_LOCK = threading.Lock()


def _in_model_fn_control_flow(graph: Any) -> bool:
  """Whether `graph` is a tf.while_loop body or condition, or a tf.cond
  branch, that model_fn builds (below a graph model_fn is called in; the
  parameter-server step loop's own body, which model_fn is called in, is
  not one)."""
  # pylint: disable=g-direct-tensorflow-import,g-import-not-at-top
  from tensorflow.python.ops import control_flow_v2_func_graphs as cf_graphs
  bodies = (cf_graphs.WhileBodyFuncGraph, cf_graphs.WhileCondFuncGraph,
            cf_graphs.CondBranchFuncGraph)
  if not isinstance(graph, bodies):
    return False
  with _MODEL_FN_GRAPHS_LOCK:
    roots = list(_MODEL_FN_GRAPHS.keys())
  outer = getattr(graph, "outer_graph", None)
  while outer is not None:
    if any(outer is root for root in roots):
      return True
    outer = getattr(outer, "outer_graph", None)
  return False


def _eagerly_held(x: Any) -> bool:
  """Whether `x` is an eagerly held variable, or an eager tensor (such as
  its handle)."""
  return is_eager_variable(x) or (isinstance(x, tf.Tensor) and
                                  hasattr(x, "numpy"))


def _refuse_gradients_in_control_flow() -> Callable[..., Any]:
  """Installs a gradients helper that refuses eager xs in a control-flow
  body; returns TF's own."""
  # pylint: disable=g-direct-tensorflow-import,g-import-not-at-top
  from tensorflow.python.ops import gradients_util
  original = gradients_util._GradientsHelper  # pylint: disable=protected-access

  def helper(ys, xs, *args, **kwargs):
    # TensorFlow's own gradient functions of while and cond pass src_graph;
    # tf.gradients and Optimizer.compute_gradients do not.
    src_graph = kwargs.get("src_graph", args[7] if len(args) > 7 else None)
    if src_graph is None and _in_model_fn_control_flow(
        tf.compat.v1.get_default_graph()) and any(
            _eagerly_held(x) for x in tf.nest.flatten(xs)):
      raise NeedsGraphEngine(
          "model_fn asks for gradients of variables inside a tf.while_loop "
          "or tf.cond body (e.g. per-microbatch gradients, as "
          "tensorflow-privacy's DP optimizers compute them), which a TF1 "
          "graph traced back through the loop's captured tensors to the "
          "variables; in a function the function engine's eagerly held "
          f"variables are not reached there. {GRAPH_ENGINE_FIX}")
    return original(ys, xs, *args, **kwargs)

  gradients_util._GradientsHelper = helper  # pylint: disable=protected-access
  return original


def _restore_gradients_helper(original: Callable[..., Any]) -> None:
  # pylint: disable=g-direct-tensorflow-import,g-import-not-at-top
  from tensorflow.python.ops import gradients_util
  gradients_util._GradientsHelper = original  # pylint: disable=protected-access


_GRADIENTS_IN_CONTROL_FLOW = _WhileTracing(_refuse_gradients_in_control_flow,
                                           _restore_gradients_helper)


@contextlib.contextmanager
def tf1_gradients_in_control_flow() -> Iterator[None]:
  """NeedsGraphEngine for gradients of variables asked inside a loop body.

  In the Estimator's TF1 graph, `tf.gradients(loss_i, variables)` inside a
  `tf.while_loop` body (the loss computed outside the loop from the
  variables) found its way back through the body's captured tensors to the
  variables' reads. Traced here, the variables are held eagerly: their
  handles enter the body as new captures no read uses, and TensorFlow
  returns None or zeros for them without an error, a silent wrong result
  (tensorflow-privacy's DP optimizers trained with such gradients). Inside
  this scope such a request raises NeedsGraphEngine, so the default engine
  runs the call on the graph engine.
  """
  graph = tf.compat.v1.get_default_graph()
  with _MODEL_FN_GRAPHS_LOCK:
    _MODEL_FN_GRAPHS[graph] = _MODEL_FN_GRAPHS.get(graph, 0) + 1
  try:
    with _GRADIENTS_IN_CONTROL_FLOW.held():
      yield
  finally:
    with _MODEL_FN_GRAPHS_LOCK:
      _MODEL_FN_GRAPHS[graph] -= 1
      if not _MODEL_FN_GRAPHS[graph]:
        del _MODEL_FN_GRAPHS[graph]


def _raised_in(error: BaseException, function_name: str) -> bool:
  """Whether a frame of `error`'s traceback is a function of that name."""
  tb = error.__traceback__
  while tb is not None:
    if tb.tb_frame.f_code.co_name == function_name:
      return True
    tb = tb.tb_next
  return False


@contextlib.contextmanager
def graph_only_errors(mode: str) -> Iterator[None]:
  """Turns TF1-graph-only errors of the model_fn trace into NeedsGraphEngine.

  Args:
    mode: the ModeKeys value being traced, for the message.

  Raises:
    NeedsGraphEngine: the model_fn built an initializer op of its (eagerly
      created) variables, or read a graph-only attribute of one
      (`variable.op`, also read by TF1 slot creation for partitioned
      variables), or called a method only tf-keras's TF1 classes have
      (`model.get_updates_for`), or built a TF1 Hub module in a tf-keras
      layer's name scope.
  """
  try:
    yield
  except AttributeError as error:
    v1_method = next((name for name in _KERAS_V1_METHODS
                      if f"has no attribute '{name}'" in str(error)), None)
    if v1_method is not None:
      raise NeedsGraphEngine(
          f"model_fn calls the tf-keras method {v1_method}() ({error}), which "
          "tf-keras's TF1 graph-mode Layer and Model classes have and its "
          f"TF2 classes do not, in {_CALLS.get(mode, mode)}(). "
          f"{GRAPH_ENGINE_FIX}") from error
    if _EAGER_UNDEFINED not in str(error):
      raise
    if _raised_in(error, _SLOT_CREATION):
      raise NeedsGraphEngine(
          "model_fn trains partitioned variables with a tf.compat.v1.train "
          "optimizer that has slots, whose checkpoint names TF1 took from "
          "the partitions' graph ops, which the function engine's eagerly "
          f"held variables do not have, in {_CALLS.get(mode, mode)}(). "
          f"{GRAPH_ENGINE_FIX}") from error
    raise NeedsGraphEngine(
        "model_fn reads a graph-only attribute of a variable (e.g. "
        "`variable.op.name`, as in tf.compat.v1.summary.histogram("
        "v.op.name, v)), which the function engine's eagerly held variables "
        f"do not have, in {_CALLS.get(mode, mode)}() ({error}). "
        f"{GRAPH_ENGINE_FIX}") from error
  except RuntimeError as error:
    if _HUB_STATE_SCOPE not in str(error):
      raise
    raise NeedsGraphEngine(
        "model_fn builds a TF1 Hub module (tensorflow_hub's hub.Module, also "
        "inside hub.text_embedding_column), which needs a TF1 graph's "
        f"variable and name scopes, in {_CALLS.get(mode, mode)}() ({error}). "
        f"{GRAPH_ENGINE_FIX}") from error
  except TypeError as error:
    if _raised_in(error, _INITIALIZER_GROUP) or (
        _raised_in(error, _GROUP) and _NONE_IN_GROUP in str(error)):
      raise NeedsGraphEngine(
          "model_fn builds an initializer op of its variables (e.g. "
          "tf.compat.v1.local_variables_initializer() or tf.group("
          "w.initializer)), which needs the "
          "variables of a TF1 Session graph, in "
          f"{_CALLS.get(mode, mode)}(). {GRAPH_ENGINE_FIX}") from error
    raise


def check_savers(graph: tf.Graph, mode: str) -> None:
  """NeedsGraphEngine if model_fn or a hook's begin() built a TF1 Saver.

  Such a Saver saves (`saver.save(run_context.session, path)`) or restores
  through a TF1 Session, which the function engine's hooks do not get; the
  call would fail once steps had run and checkpoints were written.

  Args:
    graph: the traced graph (model_fn, metrics and hooks' begin()).
    mode: the ModeKeys value traced, for the message.

  Raises:
    NeedsGraphEngine: the graph has a Saver's save op.
  """
  saves = [op.name for op in graph.get_operations() if op.type in _SAVER_OPS]
  if saves:
    raise NeedsGraphEngine(
        "model_fn or a hook's begin() builds a tf.compat.v1.train.Saver "
        f"({saves[0]}), which saves and restores through a TF1 Session, in "
        f"{_CALLS.get(mode, mode)}(). {GRAPH_ENGINE_FIX}")


# The op types of an optimizer's update: a train op reaches one. (Plain
# assigns do not count: the function engine's own random-stream counters
# are assigned on the way to any loss that draws random numbers.)
_APPLY_OP_PREFIXES = ("ResourceApply", "ResourceSparseApply", "Apply",
                      "SparseApply")


# TensorFlow's and our own hooks ask for what they hold through
# SessionRunArgs (a SummarySaverHook's summary may wait for the train op);
# only other hooks are looked at.
_FETCHING_HOOK_MODULES = ("tensorflow.", "estimator_compat.")


def _held_graph_elements(hook: Any, graph: tf.Graph) -> Iterator[Any]:
  """The model graph's ops and tensors a hook holds in its attributes (and
  in lists, tuples and dicts there)."""
  for value in vars(hook).values():
    items = (value.values() if isinstance(value, dict) else
             value if isinstance(value, (list, tuple)) else (value,))
    for item in items:
      if isinstance(item, (tf.Operation, tf.Tensor)) and getattr(
          item, "graph", None) is graph:
        yield item


def _writes_from_input(element: Any, input_ops: Sequence[tf.Operation]
                       ) -> bool:
  """Whether running `element` reads the input batch and applies an
  optimizer's update."""
  reached = reached_ops([element])
  return bool(reached.intersection(input_ops)) and any(
      op.type.startswith(_APPLY_OP_PREFIXES) for op in reached)


def check_hook_train_ops(hooks: Sequence[Any], graph: tf.Graph,
                         input_ops: Sequence[tf.Operation]) -> None:
  """NeedsGraphEngine if a program's hook holds a train op of its own.

  A hook (of a class outside TensorFlow and estimator_compat) holding an op
  that reads the input batch and applies an optimizer's update
  (tensorflow-gan's RunTrainOpsHook: a GAN's discriminator and generator
  train ops) runs it with `run_context.session.run(...)` in before_run, each
  run reading its own batch from the input, as in a TF1 Session. The
  function engine's hooks cannot run what reads the input, and would find
  out only at the first step, after the first checkpoint and the saving
  listeners' calls.

  Args:
    hooks: the call's hooks, their begin() done.
    graph: the traced graph.
    input_ops: the operations producing the step's input batch.

  Raises:
    NeedsGraphEngine: a hook holds such an op.
  """
  if not input_ops:
    return
  for hook in hooks:
    if type(hook).__module__.startswith(_FETCHING_HOOK_MODULES):
      continue
    for element in _held_graph_elements(hook, graph):
      if _writes_from_input(element, input_ops):
        raise NeedsGraphEngine(
            f"{type(hook).__name__} holds {element.name!r}, an op that reads "
            "the input batch and applies an optimizer's update (a train op "
            "of its own), "
            "which it can run only with a TF1 Session's session.run(). "
            f"{GRAPH_ENGINE_FIX}")


@contextlib.contextmanager
def hook_session_errors() -> Iterator[None]:
  """NeedsGraphEngine for hooks whose after_create_session needs TF1.

  Hooks' after_create_session runs once the variables exist and before any
  step runs or file is written, so such a call can still move to the graph
  engine: a session.run the eager session refuses (a feed_dict, options, a
  tensor it cannot evaluate), a Tensor used as a dict key (a feed_dict
  built in Python) or Variable.load(value, session).

  Raises:
    NeedsGraphEngine: a hook's after_create_session needs a TF1 Session.
  """
  try:
    yield
  except NeedsGraphEngine:
    raise
  except UnsupportedOnFunctionEngine as error:
    raise NeedsGraphEngine(str(error)) from error
  except AttributeError as error:
    if not (_raised_in(error, _VARIABLE_LOAD) and _NO_INITIALIZER in str(
        error)):
      raise
    raise NeedsGraphEngine(
        "A hook's after_create_session calls Variable.load(value, session), "
        "which feeds the variable's initializer in a TF1 Session. "
        f"{GRAPH_ENGINE_FIX}") from error
  except TypeError as error:
    if _UNHASHABLE not in str(error):
      raise
    raise NeedsGraphEngine(
        "A hook's after_create_session uses a Tensor as a dict key or set "
        "member (e.g. session.run(..., feed_dict={placeholder: value})), "
        f"which needs a TF1 Session graph. {GRAPH_ENGINE_FIX}") from error
