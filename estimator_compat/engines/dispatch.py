"""Picks the engine of each call: the default engine never answers differently.

When the user chose no engine (no RunConfig(engine=...), no
$ESTIMATOR_COMPAT_ENGINE), each train / evaluate / predict call runs on the
function engine, unless it cannot honour the program exactly: then the same
call runs on the graph engine, and one log line says why. The function
engine says so by raising `NeedsGraphEngine` while it sets the call up (the
input_fn, the model_fn trace, hooks' begin()), before any step runs or any
file is written, so the rerun starts from the same model_dir. A program run
with eager execution disabled (tf.compat.v1.disable_eager_execution()) goes
to the graph engine straight away.

A call made inside a TF1 graph while eager execution is on (evaluate() from
a saving listener or hook of a graph-engine run, as train_and_evaluate's
evaluation after each checkpoint; or under `with tf.Graph().as_default()`)
runs in a fresh eager context, a thread of its own, and there picks its
engine as any other call: the Estimator built every call's graph afresh
too, whatever graph was the default. One log line says so, once.

A chosen engine runs every call itself: on engine='function' the
NeedsGraphEngine error is the answer (it names the fix).
"""

import concurrent.futures
import threading
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, TypeVar

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import context

from estimator_compat.front import tf_logging as logging
from estimator_compat.engines import graph as graph_engine
from estimator_compat.engines.base import Engine
from estimator_compat.engines import graph_distributed
from estimator_compat.engines.function import loops as function_engine
from estimator_compat.errors import (GRAPH_ENGINE_FIX, NeedsGraphEngine,
                                     UnsupportedOnFunctionEngine)
from estimator_compat.front.model_fn_call import ModelSetup

_EAGER_DISABLED = (
    "Eager execution is disabled (tf.compat.v1.disable_eager_execution() or "
    "disable_v2_behavior()), so the program builds TF1 graphs")


_T = TypeVar("_T")
_INSIDE_GRAPH = (
    "{call}() was called inside a TF1 graph (from a hook or saving listener "
    "of a graph-engine run, or under `with tf.Graph().as_default()`) while "
    "eager execution is on: it runs in a fresh eager context of its own, "
    "where it picks its engine as any other call (logged once)")
_inside_graph_logged = set()


def _inside_tf1_graph() -> bool:
  """Whether this call is made inside a TF1 graph, eager execution being on.

  Not the same as eager execution disabled: the program's other calls run
  eagerly; only this one comes from inside a graph's scope.
  """
  return (not tf.executing_eagerly() and
          context.default_execution_mode == context.EAGER_MODE)


def _log_inside_graph(call: str) -> None:
  if call not in _inside_graph_logged:
    _inside_graph_logged.add(call)
    logging.info("%s.", _INSIDE_GRAPH.format(call=call))


def _in_fresh_eager_context(call: str, run: Callable[[], _T]) -> _T:
  """`run()` in a thread of its own: eager, with no graph as the default.

  (Eager mode and the default graph are per thread in TensorFlow; the
  caller's graph, device and name scopes stay with the caller.)
  """
  outcome: Dict[str, Any] = {}

  def target():
    try:
      outcome["value"] = run()
    except BaseException as error:  # pylint: disable=broad-except
      outcome["error"] = error

  thread = threading.Thread(target=target, name=f"estimator_compat_{call}")
  thread.start()
  thread.join()
  if "error" in outcome:
    raise outcome["error"]
  return outcome["value"]


def _generate_in_fresh_eager_context(make: Callable[[], Iterator[_T]]
                                    ) -> Iterator[_T]:
  """The items of `make()`, each made in one thread of its own (eager)."""
  with concurrent.futures.ThreadPoolExecutor(
      1, thread_name_prefix="estimator_compat_predict") as pool:
    generator = make()
    try:
      while True:
        try:
          item = pool.submit(next, generator).result()
        except StopIteration:
          return
        yield item
    finally:
      pool.submit(generator.close).result()


def _reason(error: Exception) -> str:
  """The error's message without its fix: what needs a TF1 Session."""
  return str(error).replace(GRAPH_ENGINE_FIX, "").strip().rstrip(".")


def _eager_disabled_error() -> NeedsGraphEngine:
  return NeedsGraphEngine(
      f"{_EAGER_DISABLED}; the function engine needs eager execution. "
      f"{GRAPH_ENGINE_FIX}")


def _first_engine(setup: ModelSetup, call: str) -> Optional[Engine]:
  """The engine this call starts on; None when it starts on the graph one.

  Raises:
    NeedsGraphEngine: engine='function' chosen with eager execution off.
  """
  choices = setup.choices
  if choices.engine_chosen:
    if choices.engine == "graph":
      return None
    if not tf.executing_eagerly():
      raise _eager_disabled_error()
    return _function_engine()
  if not tf.executing_eagerly():
    _move_to_graph(setup, call, _eager_disabled_error())
    return None
  return _function_engine()


def _function_engine() -> Engine:
  """The function engine, TensorFlow's eager context started (eagerly).

  Started first inside a graph (the TF1 graph the engine builds around an
  input_fn, or a trace), the eager context turns soft device placement off
  for every eager op of the process: a model_fn's `with tf.device("/gpu:0")`
  then fails to make its variables on a machine with no GPU, where the
  Estimator's default session config placed them softly.
  """
  context.ensure_initialized()
  return function_engine


def _move_to_graph(setup: ModelSetup, call: str, error: Exception) -> None:
  """Logs why this call runs on the graph engine; raises if it cannot.

  Raises:
    UnsupportedOnFunctionEngine: the run also sets something only the
      function engine runs (a strategy, steps_per_loop > 1).
  """
  reason = _reason(error)
  config = setup.config
  blocker = _graph_cannot_run(setup, call)
  if blocker:
    refusal = UnsupportedOnFunctionEngine(
        f"{reason}; but {blocker}. Fix: drop one of the two (e.g. train on "
        "one device).")
    refusal.needs_graph_engine = error
    raise refusal from error
  if config.jit_compile:
    raise UnsupportedOnFunctionEngine(
        f"{reason}; but RunConfig(jit_compile=True) needs the function "
        "engine. Fix: RunConfig(jit_compile=False).") from error
  if call == "train" and config.steps_per_loop_required:
    raise UnsupportedOnFunctionEngine(
        f"{reason}; but RunConfig(steps_per_loop={config.steps_per_loop}) "
        "needs the function engine. Fix: RunConfig(steps_per_loop=1).") from (
            error)
  logging.warning("%s: running this %s() on the graph engine.", reason, call)


def _graph_cannot_run(setup: ModelSetup, call: str) -> Optional[str]:
  """Why the graph engine cannot run this call's strategy, or None.

  As in the Estimator, only train() runs under train_distribute and only
  evaluate() under eval_distribute; predict() never runs under a strategy.
  """
  if call == "train":
    return graph_distributed.unsupported(setup.config, setup.choices)
  if call == "evaluate":
    return graph_distributed.evaluation_unsupported(setup.config)
  return None


def _move_to_graph_in_caller(setup: ModelSetup, call: str,
                             refusal: UnsupportedOnFunctionEngine) -> None:
  """Whether the graph engine runs, in the caller's TF1 graph, a call that
  its fresh eager context refused; re-raises `refusal` if it cannot.

  The fresh eager context refused a call the function engine cannot run
  because of its strategy: the graph engine runs strategies only with eager
  execution off. The caller's graph is TF1 graph mode, where the Estimator
  ran such a call (and the graph engine builds its own graph there), so the
  call runs on the graph engine in the caller's thread when nothing else
  needs the function engine.
  """
  cause = getattr(refusal, "needs_graph_engine", None)
  if cause is None or setup.choices.engine_chosen:
    raise refusal
  _move_to_graph(setup, call, cause)


def _escapes_graph(setup: ModelSetup, call: str) -> bool:
  """Whether this call leaves the TF1 graph it was made in (see above)."""
  if setup.choices.graph_chosen:
    return False  # The graph engine builds its own graph anyway.
  if not _inside_tf1_graph():
    return False
  _log_inside_graph(call)
  return True


def train(*, setup: ModelSetup, input_fn, hooks: Sequence[Any],
          steps: Optional[int], max_steps: Optional[int],
          saving_listeners: Sequence[Any]) -> Optional[float]:
  """One train() call on the engine that can honour it (engine's train())."""
  args = dict(setup=setup, input_fn=input_fn, hooks=hooks, steps=steps,
              max_steps=max_steps, saving_listeners=saving_listeners)
  if _escapes_graph(setup, "train"):
    try:
      return _in_fresh_eager_context("train", lambda: train(**args))
    except UnsupportedOnFunctionEngine as refusal:
      _move_to_graph_in_caller(setup, "train", refusal)
    return graph_engine.train(**args)
  engine = _first_engine(setup, "train")
  if engine is not None:
    try:
      return engine.train(**args)
    except NeedsGraphEngine as error:
      if setup.choices.engine_chosen:
        raise
      _move_to_graph(setup, "train", error)
  return graph_engine.train(**args)


def evaluate(*, setup: ModelSetup, input_fn, hooks: Sequence[Any],
             steps: Optional[int],
             checkpoint_path: Optional[str]) -> Dict[str, Any]:
  """One evaluate() call on the engine that can honour it."""
  args = dict(setup=setup, input_fn=input_fn, hooks=hooks, steps=steps,
              checkpoint_path=checkpoint_path)
  if _escapes_graph(setup, "evaluate"):
    try:
      return _in_fresh_eager_context("evaluate", lambda: evaluate(**args))
    except UnsupportedOnFunctionEngine as refusal:
      _move_to_graph_in_caller(setup, "evaluate", refusal)
    return graph_engine.evaluate(**args)
  engine = _first_engine(setup, "evaluate")
  if engine is not None:
    try:
      return engine.evaluate(**args)
    except NeedsGraphEngine as error:
      if setup.choices.engine_chosen:
        raise
      _move_to_graph(setup, "evaluate", error)
  return graph_engine.evaluate(**args)


def predict(*, setup: ModelSetup, input_fn, hooks: Sequence[Any],
            predict_keys: Optional[Sequence[str]], checkpoint_path: str,
            yield_single_examples: bool) -> Iterator[Any]:
  """One predict() call; the engine is settled before the first example."""
  args = dict(setup=setup, input_fn=input_fn, hooks=hooks,
              predict_keys=predict_keys, checkpoint_path=checkpoint_path,
              yield_single_examples=yield_single_examples)
  if _escapes_graph(setup, "predict"):
    yield from _generate_in_fresh_eager_context(lambda: predict(**args))
    return
  engine = _first_engine(setup, "predict")
  if engine is None:
    yield from graph_engine.predict(**args)
    return
  predictions = engine.predict(**args)
  try:
    # The first example needs the whole setup (and one step) done.
    first = next(predictions)
  except StopIteration:
    return
  except NeedsGraphEngine as error:
    if setup.choices.engine_chosen:
      raise
    _move_to_graph(setup, "predict", error)
    yield from graph_engine.predict(**args)
    return
  try:
    yield first
    yield from predictions
  finally:
    predictions.close()
