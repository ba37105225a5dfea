"""Runs SessionRunHooks on the function engine.

Hooks keep their whole protocol: `begin()` runs inside the first trace of the
step function (so tensors they look up or create live in that graph),
`after_create_session()` once variables exist, `before_run()` /
`after_run()` around every step with the values of the tensors they asked for
in `SessionRunArgs`, `end()` at the end, and `request_stop()`. Tensors are
matched by name across traces. `session.run()` inside a hook can read
variables and the global step; anything that needs a real Session (feeds,
RunOptions, other tensors) raises `UnsupportedOnFunctionEngine`.
"""

from typing import Any, Callable, Dict, List, Sequence, Set

import numpy as np
import tensorflow as tf

_train = tf.compat.v1.train
GRAPH_ENGINE_FIX = ("Fix: run this program on the graph engine: "
                    "RunConfig(engine='graph') or ESTIMATOR_COMPAT_ENGINE=graph.")


class UnsupportedOnFunctionEngine(ValueError):
  """A hook needs something only a TF1 Session can give."""


class NeedsGraphEngine(UnsupportedOnFunctionEngine):
  """The program needs a TF1 Session; found before any step ran.

  Raise it only while a call is being set up (input_fn, the trace of the
  model_fn, hooks' begin()), never once a step ran or a file was written:
  the default engine then runs the whole call again on the graph engine
  (logging the reason once), while an explicit engine='function' shows it
  as the error. The message says what needs the Session.
  """


class EagerSession:
  """What hooks receive as `session`: reads variables and the global step."""

  def __init__(self, graph: tf.Graph, read_value: Callable[[Any], Any]):
    self.graph = graph
    self._read_value = read_value

  def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
    if feed_dict or options is not None or run_metadata is not None:
      raise UnsupportedOnFunctionEngine(
          "A hook called session.run() with feed_dict/options/run_metadata, "
          f"which the function engine cannot honour. {GRAPH_ENGINE_FIX}")
    return tf.nest.map_structure(self._read_value, fetches)


def _fetch_key(item: Any, graph: tf.Graph, hook: Any) -> str:
  if isinstance(item, str):
    item = graph.as_graph_element(item)
  if isinstance(item, tf.Variable):
    return "var:" + item.name
  if isinstance(item, tf.Operation):
    return "op:" + item.name
  if isinstance(item, tf.Tensor) and not hasattr(item, "numpy"):
    return "tensor:" + item.name
  raise UnsupportedOnFunctionEngine(
      f"{type(hook).__name__} asked for {item!r}, which is not a tensor, "
      f"operation or variable of the model's graph. {GRAPH_ENGINE_FIX}")


class HookRunner:
  """Feeds a list of hooks the way MonitoredSession did."""

  def __init__(self, hooks: Sequence[Any]):
    self.hooks = list(hooks)
    self._stop = False
    self._pending: List[Any] = []
    self.session = None

  def begin(self) -> None:
    """Calls begin() on every hook; must run inside the reference trace."""
    for hook in self.hooks:
      if isinstance(hook, (_train.CheckpointSaverHook, _train.FeedFnHook,
                           _train.ProfilerHook)):
        raise UnsupportedOnFunctionEngine(
            f"{type(hook).__name__} needs a TF1 Session (the function engine "
            "saves checkpoints itself; pass saving_listeners to train() "
            f"instead of a CheckpointSaverHook). {GRAPH_ENGINE_FIX}")
      hook.begin()

  def after_create_session(self, session: EagerSession) -> None:
    self.session = session
    for hook in self.hooks:
      hook.after_create_session(session, None)

  def before_run(self, graph: tf.Graph, base_fetches: Dict[str, Any]
                ) -> Set[str]:
    """Asks every hook what it wants; returns the fetch keys of this step."""
    keys = set()
    self._pending = []
    context = _train.SessionRunContext(
        original_args=_train.SessionRunArgs(base_fetches), session=self.session)
    self._context = context
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
          lambda x, h=hook: _fetch_key(x, graph, h), args.fetches)
      keys.update(tf.nest.flatten(structure))
      self._pending.append(structure)
    return keys

  def after_run(self, values: Dict[str, Any]) -> None:
    """Hands each hook the values it asked for."""
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
    for hook in self.hooks:
      hook.end(self.session)


def to_numpy(value: Any) -> Any:
  if value is None:
    return None
  return value.numpy() if hasattr(value, "numpy") else np.asarray(value)
