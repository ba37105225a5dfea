"""The phases of a train(), evaluate() or predict() call, and their clock.

`install(clock)` wraps the engine functions each phase of call_costs.py
names (its module docstring lists them) so that `PhaseClock` adds each
one's exclusive time to that phase while it is recording. The phase names
of the contract's floor are here too: what any implementation of the
Estimator's contract does in a call.
"""

import collections
import contextlib
import functools
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from estimator_compat.engines import graph as graph_engine
from estimator_compat.engines.function import loops
from estimator_compat.engines.function import session as session_lib
from estimator_compat.engines.function import traced_model
from estimator_compat.engines.function import variable_saver

PHASES = ("input_fn", "model_fn trace", "pruning", "restore", "first step",
          "single steps", "loop first call", "loop", "metric read",
          "release", "eval events", "program input_fn", "program model_fn",
          "other")
TRAIN_PHASES = ("input_fn", "model_fn trace", "hooks begin", "pruning",
                "restore", "saver build", "graph_def copy",
                "after_create_session", "graph.pbtxt", "checkpoint saves",
                "first call per fetch set", "boundary steps",
                "loop first call", "loop", "hooks before_run",
                "hooks after_run", "hooks end", "release",
                "program input_fn", "program model_fn", "other")
# What every implementation of the contract does in any call, and in a
# train() call (module docstring).
CALL_FLOOR_PHASES = ("program input_fn", "program model_fn", "restore")
FLOOR_PHASES = CALL_FLOOR_PHASES + (
    "hooks begin", "hooks before_run", "hooks after_run", "hooks end",
    "checkpoint saves")


def floor_seconds(phases: Dict[str, float], names: Tuple[str, ...]) -> float:
  """The contract's floor in one call's phases (a phase it lacked: 0)."""
  return sum(phases.get(name, 0.0) for name in names)


class PhaseClock:
  """Exclusive time per phase of the calls made while `recording()`."""

  def __init__(self, clock: Callable[[], float] = time.perf_counter):
    self._clock = clock
    self.times: Dict[str, float] = collections.defaultdict(float)
    self.counts: Dict[str, int] = collections.defaultdict(int)
    self.batches: Dict[str, int] = collections.defaultdict(int)
    self._stack: List[List[float]] = []
    self._on = False
    self.training = False  # Names a train() call's phases.
    self.seen: set = set()  # Fetch sets a train() call's steps have run.

  @contextlib.contextmanager
  def recording(self) -> Iterator[None]:
    self.times.clear()
    self.counts.clear()
    self.batches.clear()
    self.seen.clear()
    self._on = True
    start = self._clock()
    try:
      yield
    finally:
      self._on = False
      self.times["total"] = self._clock() - start
      self.times["other"] = self.times["total"] - sum(
          v for k, v in self.times.items() if k not in ("total", "other"))

  def timed(self, phase: Callable[..., str], function: Callable[..., Any],
            batches: Callable[[Any], int] = lambda unused: 1,
            batches_of_call: Optional[Callable[..., int]] = None,
            training_only: bool = False) -> Callable[..., Any]:
    """`function`, its exclusive time added to the phase `phase(...)` names.

    `batches(result)`: how many batches the call ran (added to the phase's);
    or `batches_of_call(*args, **kwargs)`, from the call's arguments.
    `training_only`: timed in train() calls only (elsewhere it stays in the
    phase that calls it, as before train() had phases).
    """

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
      if not self._on or (training_only and not self.training):
        return function(*args, **kwargs)
      name = phase(*args, **kwargs)
      self._stack.append([self._clock(), 0.0])
      try:
        result = function(*args, **kwargs)
        self.batches[name] += (batches(result) if batches_of_call is None
                               else batches_of_call(*args, **kwargs))
        return result
      finally:
        start, inner = self._stack.pop()
        spent = self._clock() - start
        self.times[name] += spent - inner
        self.counts[name] += 1
        if self._stack:
          self._stack[-1][1] += spent

    return wrapper


def install(clock: PhaseClock) -> None:
  """Wraps the engine's functions of each phase with `clock`."""

  def fixed(name):
    return lambda *args, **kwargs: name

  loops.make_input = clock.timed(fixed("input_fn"), loops.make_input)
  loops.model_input = clock.timed(fixed("input_fn"), loops.model_input)
  model = traced_model.TracedModel
  model.__init__ = clock.timed(fixed("model_fn trace"), model.__init__)
  model._prune_wrapped = clock.timed(fixed("pruning"), model._prune_wrapped)  # pylint: disable=protected-access
  variable_saver.restore_or_warm_start = clock.timed(
      fixed("restore"), variable_saver.restore_or_warm_start)

  def step_phase(unused_model, keys=(), num_steps=1):
    if clock.training:
      fetch_set = (tuple(sorted(keys)), num_steps > 1)
      if fetch_set not in clock.seen:
        clock.seen.add(fetch_set)
        return "first call per fetch set"
      return "boundary steps" if num_steps == 1 else "loop"
    return "first step" if not clock.counts["first step"] else "single steps"

  def loop_phase(*unused_args, **unused_kwargs):
    first = not clock.counts["loop first call"]
    return "loop first call" if first else "loop"

  model.step = clock.timed(
      step_phase, model.step,
      batches_of_call=lambda unused, keys=(), num_steps=1: num_steps)
  model.advance = clock.timed(loop_phase, model.advance,
                              lambda result: result[0])
  _install_train(clock, fixed)
  model.repeat = clock.timed(loop_phase, model.repeat, lambda ran: ran)
  model.predict_batches = clock.timed(loop_phase, model.predict_batches,
                                      lambda result: len(result[0]))
  model.run_without_input = clock.timed(fixed("metric read"),
                                        model.run_without_input)
  model.release = clock.timed(fixed("release"), model.release)
  graph_engine.write_eval_summary = clock.timed(
      fixed("eval events"), graph_engine.write_eval_summary)


def _install_train(clock: PhaseClock,
                   fixed: Callable[[str], Callable[..., str]]) -> None:
  """Wraps, for train() calls only, their own phases with `clock`."""
  timed = functools.partial(clock.timed, training_only=True)
  runner = session_lib.HookRunner
  runner.begin = timed(fixed("hooks begin"), runner.begin)
  runner.after_create_session = timed(fixed("after_create_session"),
                                      runner.after_create_session)
  runner.before_run = timed(fixed("hooks before_run"), runner.before_run)
  runner.after_run = timed(fixed("hooks after_run"), runner.after_run)
  runner.end = timed(fixed("hooks end"), runner.end)
  variable_saver.make_saver = timed(fixed("saver build"),
                                    variable_saver.make_saver)
  writer = variable_saver.CheckpointWriter
  writer.__init__ = timed(fixed("graph_def copy"), writer.__init__)
  writer.begin = timed(fixed("graph.pbtxt"), writer.begin)
  writer._save = timed(fixed("checkpoint saves"), writer._save)  # pylint: disable=protected-access
