"""Runs SessionRunHooks on the function engine.

Hooks keep their whole protocol, each call made with the model's graph as
the default graph (as MonitoredSession did): `begin()` runs inside the
trace of the step function (so tensors they look up or create live in that
graph), `after_create_session()` once variables exist, `before_run()` /
`after_run()` around every step with the values of what they asked for in
`SessionRunArgs` (any nest of tensors, operations, variables or their
names), `end()` at the end, and `request_stop()`. `session.run()` inside a
hook evaluates any fetch structure that does not need the input batch;
what needs a real Session (feeds, RunOptions, the input batch) raises
`UnsupportedOnFunctionEngine`.
"""

from typing import Any, Callable, Dict, List, Optional, Sequence, Set

import numpy as np
import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import context
from tensorflow.python.ops import resource_variable_ops

from estimator_compat.engines.function.fetch_keys import FetchKey, FetchKind
from estimator_compat.errors import GRAPH_ENGINE_FIX, UnsupportedOnFunctionEngine, NeedsGraphEngine

_train = tf.compat.v1.train


class EagerSession:
  """What hooks receive as `session`: `run()` evaluates fetch structures.

  Args:
    graph: the model's graph (`session.graph`).
    run_fetches: computes the values of a whole fetch structure.
  """

  def __init__(self, graph: tf.Graph, run_fetches: Callable[[Any], Any]):
    self.graph = graph
    self._run_fetches = run_fetches

  def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
    if feed_dict or options is not None or run_metadata is not None:
      raise UnsupportedOnFunctionEngine(
          "A hook called session.run() with feed_dict/options/run_metadata, "
          f"which the function engine cannot honour. {GRAPH_ENGINE_FIX}")
    # Hooks run with the model's graph (a function graph, or under a
    # parameter-server strategy a plain one) as default; values are
    # computed eagerly, outside it.
    with tf.init_scope(), context.eager_mode():
      return self._run_fetches(fetches)


class GraphVariable:
  """An eagerly held variable as a hook sees it: an element of `graph`.

  TF's hooks check that what they are given belongs to the default graph
  (`LoggingTensorHook({"step": global_step})`); the function engine's
  variables live outside the traced graph, so hooks get this stand-in,
  which a fetch turns back into the variable's value.
  """

  def __init__(self, variable: tf.Variable, graph: tf.Graph):
    self.variable = variable
    self.graph = graph
    self.name = variable.name
    self.dtype = variable.dtype
    self.shape = variable.shape

  def __repr__(self):
    return f"<GraphVariable {self.name!r}>"


def is_unread_variable(value: Any) -> bool:
  """True for the object `assign*` returns: a variable read after the write."""
  return isinstance(value, resource_variable_ops._UnreadVariable)  # pylint: disable=protected-access


def is_eager_variable(value: Any) -> bool:
  """True for a variable held outside any graph (VariableCapture's)."""
  return isinstance(value, tf.Variable) and not is_unread_variable(value) and (
      not getattr(value, "_in_graph_mode", False))


def graph_variables(graph: tf.Graph) -> Dict[str, tf.Variable]:
  """The variables registered in `graph`, by name with and without ':0'."""
  out = {}
  keys = (tf.compat.v1.GraphKeys.GLOBAL_VARIABLES,
          tf.compat.v1.GraphKeys.LOCAL_VARIABLES,
          tf.compat.v1.GraphKeys.METRIC_VARIABLES)
  for key in keys:
    for variable in graph.get_collection(key):
      if isinstance(variable, tf.Variable):
        out.setdefault(variable.name, variable)
        out.setdefault(variable.name.split(":")[0], variable)
  return out


def global_step_read_name(graph: tf.Graph) -> str:
  """The name of the global step's read tensor in `graph` (made if absent)."""
  # pylint: disable=g-direct-tensorflow-import,g-import-not-at-top
  from tensorflow.python.training import training_util
  return training_util._get_or_create_global_step_read(graph).name  # pylint: disable=protected-access


def begin_step_counter(hook: Any, graph: tf.Graph) -> None:
  """StepCounterHook.begin() for an eager global_step (it has no `.op`).

  The hook's own begin() names its summary tag after `global_step.op`, which
  an eagerly held variable does not have; the tag and the step read are the
  ones it would have found in a TF1 graph.
  """
  if hook._summary_writer is None and hook._output_dir:  # pylint: disable=protected-access
    hook._summary_writer = tf.compat.v1.summary.FileWriterCache.get(  # pylint: disable=protected-access
        hook._output_dir)  # pylint: disable=protected-access
  hook._global_step_tensor = graph.get_tensor_by_name(  # pylint: disable=protected-access
      global_step_read_name(graph))
  step = tf.compat.v1.train.get_global_step(graph)
  hook._summary_tag = step.name.split(":")[0] + "/sec"  # pylint: disable=protected-access


def _begin(hook: Any) -> None:
  """hook.begin(); a hook that needs a graph-mode global step reroutes."""
  try:
    hook.begin()
  except AttributeError as e:
    if "eager execution" not in str(e):
      raise
    raise NeedsGraphEngine(
        f"{type(hook).__name__}.begin() uses a graph-mode attribute of an "
        f"eagerly held variable ({e}). {GRAPH_ENGINE_FIX}") from e


class HookRunner:
  """Feeds a list of hooks the way MonitoredSession did.

  Made with the model's graph as the default graph; every hook call runs
  with that graph as default.
  """

  def __init__(self, hooks: Sequence[Any]):
    self.hooks = list(hooks)
    self.graph = tf.compat.v1.get_default_graph()
    self._stop = False
    self._pending: List[Any] = []
    self._reads: Dict[Any, Any] = {}
    self._variables_by_name: Optional[Dict[str, tf.Variable]] = None
    self.variables: Dict[str, Any] = {}
    self.session = None

  def begin(self) -> None:
    """Calls begin() on every hook; must run inside the reference trace."""
    with self.graph.as_default():
      for hook in self.hooks:
        if isinstance(hook, (_train.CheckpointSaverHook, _train.FeedFnHook,
                             _train.ProfilerHook)):
          raise NeedsGraphEngine(
              f"{type(hook).__name__} needs a TF1 Session (the function "
              "engine saves checkpoints itself; pass saving_listeners to "
              "train() instead of a CheckpointSaverHook). "
              f"{GRAPH_ENGINE_FIX}")
        if getattr(type(hook), "begin", None) is _train.StepCounterHook.begin:
          begin_step_counter(hook, self.graph)
          continue
        bound = (self._bind_variables(hook)
                 if isinstance(hook, _train.LoggingTensorHook) else None)
        if bound is None:
          _begin(hook)
          continue
        # Only for begin(), which resolves them: the hook keeps what it was
        # given for the next call (and its graph).
        given, hook._tensors = hook._tensors, bound  # pylint: disable=protected-access
        try:
          hook.begin()
        finally:
          hook._tensors = given  # pylint: disable=protected-access

  def _variable_named(self, name: str) -> Optional[tf.Variable]:
    if self._variables_by_name is None:
      self._variables_by_name = graph_variables(self.graph)
    return self._variables_by_name.get(name)

  def _bind_variables(self, hook: Any) -> Optional[Dict[str, Any]]:
    """A LoggingTensorHook's tensors with graph stand-ins for variables.

    Its begin() accepts only elements of the default graph, given as objects
    or names; in a TF1 graph, variables were such elements. None when it
    names no eagerly held variable.
    """
    tensors = getattr(hook, "_tensors", None)
    if not isinstance(tensors, dict):
      return None
    bound = dict(tensors)
    for tag, item in tensors.items():
      variable = (self._variable_named(item) if isinstance(item, str)
                  else item)
      if is_eager_variable(variable):
        bound[tag] = GraphVariable(variable, self.graph)
    return bound if any(bound[t] is not tensors[t] for t in tensors) else None

  def _fetch_key(self, item: Any, hook: Any) -> FetchKey:
    """The step fetch key of one leaf of a hook's SessionRunArgs."""
    if isinstance(item, str):
      variable = self._variable_named(item)
      item = variable if variable is not None else (
          self.graph.as_graph_element(item))
    if isinstance(item, GraphVariable):
      item = item.variable
    if is_unread_variable(item):
      # Its value after the write: a read made once in the graph.
      if item.ref() not in self._reads:
        with self.graph.as_default():
          self._reads[item.ref()] = item.read_value()
      item = self._reads[item.ref()]
    if isinstance(item, tf.Variable):
      key = FetchKey(FetchKind.VARIABLE, item.name)
      self.variables[key] = item
      return key
    if isinstance(item, tf.Operation):
      return FetchKey(FetchKind.OPERATION, item.name)
    if isinstance(item, tf.Tensor) and not hasattr(item, "numpy"):
      return FetchKey(FetchKind.TENSOR, item.name)
    raise UnsupportedOnFunctionEngine(
        f"{type(hook).__name__} asked for {item!r}, which is not a tensor, "
        f"operation or variable of the model's graph. {GRAPH_ENGINE_FIX}")

  def after_create_session(self, session: EagerSession) -> None:
    self.session = session
    with self.graph.as_default():
      for hook in self.hooks:
        hook.after_create_session(session, None)

  def before_run(self, graph: tf.Graph, base_fetches: Dict[str, Any]
                ) -> Set[str]:
    """Asks every hook what it wants; returns the fetch keys of this step."""
    del graph  # Hooks see the graph this runner was made in.
    keys = set()
    self._pending = []
    context = _train.SessionRunContext(
        original_args=_train.SessionRunArgs(base_fetches), session=self.session)
    self._context = context
    with self.graph.as_default():
      for hook in self.hooks:
        args = hook.before_run(context)
        if args is None:
          self._pending.append(None)
          continue
        if args.feed_dict or args.options is not None:
          raise UnsupportedOnFunctionEngine(
              f"{type(hook).__name__} asked for feed_dict or RunOptions. "
              f"{GRAPH_ENGINE_FIX}")
        structure = tf.nest.map_structure(
            lambda x, h=hook: self._fetch_key(x, h), args.fetches)
        keys.update(tf.nest.flatten(structure))
        self._pending.append(structure)
    return keys

  def after_run(self, values: Dict[str, Any]) -> None:
    """Hands each hook the values it asked for."""
    with self.graph.as_default():
      for hook, structure in zip(self.hooks, self._pending):
        results = None if structure is None else tf.nest.map_structure(
            lambda key: values.get(key), structure)
        hook.after_run(self._context,
                       _train.SessionRunValues(results=results, options=None,
                                               run_metadata=None))
    self._stop = self._stop or self._context.stop_requested

  @property
  def stop_requested(self) -> bool:
    return self._stop

  def end(self) -> None:
    with self.graph.as_default():
      for hook in self.hooks:
        hook.end(self.session)


def to_numpy(value: Any) -> Any:
  if value is None:
    return None
  return value.numpy() if hasattr(value, "numpy") else np.asarray(value)
