"""The training outer loop of the function engine, written once.

As in Orbit (tensorflow/models `orbit/controller.py`), the controller owns
*when* things happen and a runner owns *how* steps run:

- the controller clamps each call's steps to `steps`/`max_steps` and
  `steps_per_loop`, guards the global step (a train_op that does not advance
  it), calls the hooks around each call and honours their stop requests,
  saves checkpoints on their cadence (settling the runner's work in flight
  first, so that the saved step is exact), checks the loss for NaN where no
  NanTensorHook can see it, and keeps the step-rate/loss log lines and
  summaries where no standard hook can fetch them;
- with `steps_per_loop=None` (automatic), before each call it asks the
  hooks' cadences (`hook_cadence.py`) and the checkpoint cadence for the
  next step at which anything must be observed, has the runner run every
  step before it in one call (`advance`, checking each step's loss for NaN
  and that it moved global_step by exactly one) and that step in a call of
  its own with the hooks' fetches, exactly as one step per call would;
- a runner (`function/sync_runner.py`: one device, Mirrored, MWMS;
  `function/ps_runner.py`: ClusterCoordinator closures) runs `num_steps`
  steps per `train()` call and returns what the controller asked to observe.

Evaluation and prediction have controllers here too (`EvaluationController`,
`PredictionController`): their batches move no step, so they plan from the
hooks' cadences and the call sizer alone, over a `BatchRunner`
(`function/batch_runner.py` on the traced model).

The seams are in runner.py (the runner protocols, StepsRun, Advanced);
reports.py, call_sizer.py and global_step_guard.py hold the training loop's
helpers. The graph engine keeps MonitoredTrainingSession (docs/decisions.md).
"""

import dataclasses
import math
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np
import tensorflow as tf

from estimator_compat.engines.call_sizer import CallSizer
from estimator_compat.engines.global_step_guard import GlobalStepGuard
from estimator_compat.engines.reports import StepReports
from estimator_compat.engines.runner import (
    AdvancingRunner, BatchRunner, Cadence, CheckpointCadence, HookPort,
    LossOnDemandRunner, PredictionRunner, TrainRunner)
from estimator_compat.front import preemption
from estimator_compat.front import tf_logging as logging


def step_target(start: int, steps: Optional[float],
                max_steps: Optional[float]) -> Optional[int]:
  """The global step training stops at; None: until input or hooks stop.

  StopAtStepHook stops at the first step >= `start + steps` (or
  `max_steps`), so a fractional one stops at the next whole step.
  """
  if max_steps is not None:
    return math.ceil(max_steps)
  return math.ceil(start + steps) if steps is not None else None


@dataclasses.dataclass(frozen=True)
class TrainOptions:
  """What one train() call asks of the controller.

  Attributes:
    steps: train() `steps` (counted from the step at run()).
    max_steps: train() `max_steps`.
    steps_per_loop: steps per runner call; None: automatic when the runner
      can `advance` and a cadence is given, else 1.
    check_nan: raise NanLossDuringTrainingError on a non-finite loss (where
      the hooks hold no NanTensorHook).
  """
  steps: Optional[float] = None
  max_steps: Optional[float] = None
  steps_per_loop: Optional[int] = 1
  check_nan: bool = False


class TrainingController:
  """Runs one train() call's outer loop over a runner."""

  def __init__(self, *, runner: TrainRunner, hooks: HookPort,
               checkpoints: CheckpointCadence, global_step: tf.Variable,
               options: TrainOptions,
               reports: Optional[StepReports] = None,
               cadence: Optional[Cadence] = None,
               sizer: Optional[CallSizer] = None):
    """Creates the controller.

    Args:
      runner: runs the steps.
      hooks: the call's hooks (already begun, session created).
      checkpoints: the checkpoint cadence (not begun yet).
      global_step: the model's global step variable.
      options: the call's steps, steps per loop and NaN check.
      reports: log lines and summaries to keep (where no hook keeps them).
      cadence: the hooks' cadences (automatic steps per call).
      sizer: the most steps per automatic call (default: CallSizer()).
    """
    self._runner = runner
    self._hooks = hooks
    self._checkpoints = checkpoints
    self._global_step = global_step
    self._steps = options.steps
    self._max_steps = options.max_steps
    self._automatic = options.steps_per_loop is None and cadence is not None
    self._steps_per_loop = options.steps_per_loop or 1
    self._cadence = cadence
    self._sizer = sizer or CallSizer()
    self._check_nan = options.check_nan
    self._reports = reports

  def run(self) -> Optional[float]:
    """Trains until the target step, a stop request or the end of input.

    Returns:
      The last known loss.
    """
    checkpoints, hooks, runner = self._checkpoints, self._hooks, self._runner
    checkpoints.begin()
    current = int(self._global_step.numpy())
    target = step_target(current, self._steps, self._max_steps)
    if target is not None and current >= target:
      logging.info("Skipping training since max_steps has already saved.")
    guard = GlobalStepGuard(self._global_step)
    last_loss = None
    while (target is None or current < target) and not (
        hooks.stop_requested or preemption.requested()):
      planned = self._steps_per_loop
      if self._automatic:
        planned = 1 if guard.fixing else self._plan(current, target)
        if planned > 1 and isinstance(runner, AdvancingRunner):
          current, go_on, complete, loss = self._advance(planned - 1,
                                                         current, guard)
          if loss is not None:
            last_loss = loss
          if not go_on:
            break
          if not complete:
            # Stopped early (a step that did not move global_step by one):
            # the checkpoint cadence looks at the step it reached, as after
            # any step; then plan again from there.
            if checkpoints.after_step(current):
              break
            continue
          planned = 1
        # A runner that cannot `advance` runs the planned steps as one call
        # whose last step the hooks see.
        self._cadence.skip(planned - 1)
      keys = hooks.before_call()
      steps_left = None if target is None else target - current
      num_steps = planned if steps_left is None else min(planned, steps_left)
      started = time.monotonic()
      run = runner.train(num_steps=num_steps, steps_left=steps_left,
                         fetches=keys)
      if run is None:
        break
      if self._automatic and num_steps > 1:
        self._sizer.record(run.steps, time.monotonic() - started)
        self._cadence.skip(run.steps - num_steps)
      if run.loss is not None:
        last_loss = run.loss
      guard.after_call(current, run.steps)
      before = current
      current = runner.global_step(current + run.steps)
      if run.ended:
        break
      if checkpoints.due(current):
        # The saved step must be exact: settle the work still in flight.
        guard.add(runner.settle())
        current = runner.global_step(int(self._global_step.numpy()))
      if self._reports is not None:
        self._reports.count_call()
      if self._check_nan and run.loss is not None and not np.isfinite(
          run.loss):
        raise tf.compat.v1.train.NanLossDuringTrainingError()
      # The Estimator's CheckpointSaverHook ran before every other hook: a
      # hook's after_run sees this step's save (and what saving listeners,
      # such as train_and_evaluate's evaluation, did on it).
      listener_stop = checkpoints.after_step(current)
      hooks.after_call(keys, run, current)
      if self._reports is not None:
        loss = run.loss
        if loss is None and self._reports.wants_loss(before, current):
          loss = self._loss_on_demand()
          last_loss = last_loss if loss is None else loss
        self._reports.after_call(loss=loss, last_loss=last_loss,
                                 step_before=before, step=current)
      if listener_stop:
        break
    guard.add(runner.finish())
    last_loss = self._loss_on_demand(default=last_loss)
    checkpoints.end()
    hooks.end()
    if self._reports is not None:
      self._reports.close()
    logging.info("Loss for final step: %s.", last_loss)
    return last_loss

  def _loss_on_demand(self, default: Optional[float] = None
                     ) -> Optional[float]:
    """The runner's latest loss, where its calls do not fetch it."""
    if isinstance(self._runner, LossOnDemandRunner):
      loss = self._runner.latest_loss()
      if loss is not None:
        return loss
    return default

  def _plan(self, current: int, target: Optional[int]) -> int:
    """Steps up to and including the next one anything must observe."""
    planned = self._sizer.limit()
    for wanted in (None if target is None else target - current,
                   self._cadence.steps_to_next(current),
                   self._checkpoints.steps_to_next(current),
                   None if self._reports is None else
                   self._reports.steps_to_next(current)):
      if wanted is not None:
        planned = min(planned, int(wanted))
    return max(1, planned)

  def _advance(self, num_steps: int, current: int,
               guard: GlobalStepGuard
              ) -> Tuple[int, bool, bool, Optional[float]]:
    """Runs `num_steps` steps no hook sees.

    The hooks count them as steps they saw without acting (which, by the
    plan, is what they would have done). A NaN loss stops the call at its
    step, where the NanTensorHooks act as their after_run would have; a
    step that did not move global_step by one stops it too and turns
    automatic mode off (the cadences count one per step).

    Returns:
      (the global step, whether training goes on, whether all ran, the
      loss of the last step that ran or None).
    """
    cadence = self._cadence
    cadence.skip(num_steps)
    started = time.monotonic()
    done = self._runner.advance(num_steps=num_steps, step=current,
                                check_nan=cadence.checks_nan)
    self._sizer.record(done.steps, time.monotonic() - started)
    cadence.skip(done.steps - num_steps)
    if done.steps:
      guard.after_call(current, done.steps)
    current = self._runner.global_step(current + done.steps)
    if not done.regular:
      self._automatic = False
    if done.nan_loss is not None and cadence.nan_seen(done.nan_loss):
      return current, False, False, done.loss
    return current, not done.ended, (done.steps == num_steps and
                                     done.regular), done.loss


# Evaluation and prediction run this many batches one per call before they
# run many per call: a call of a few batches (a predict() per request, an
# evaluate(steps=1)) does not pay for tracing the batched loop, which costs
# about as much as a few dozen single-batch calls. A call known to run more
# batches (evaluate's `steps`, and the batches tf.data knows the input holds,
# whichever is fewer) batches from its first batch on: it will pay for the
# loop anyway.
SINGLE_BATCHES_FIRST = 32


@dataclasses.dataclass(frozen=True)
class BatchOptions:
  """How an evaluation or prediction call may run its batches.

  Attributes:
    automatic: batches no hook observes may run many per call
      (`steps_per_loop=None` and hooks that look at no step or count their
      own iterations); else one batch per call.
    steps: evaluate()'s `steps` (a fraction runs up to the next whole
      batch); None: until the input ends or a hook stops.
    input_batches: the batches tf.data knows the input holds; None: unknown.
  """
  automatic: bool
  steps: Optional[float] = None
  input_batches: Optional[int] = None

  def single_batches_first(self) -> int:
    """How many batches run one per call before many per call."""
    known = [n for n in (self.steps, self.input_batches) if n is not None]
    if known and min(known) > SINGLE_BATCHES_FIRST:
      return 0
    return SINGLE_BATCHES_FIRST


def _batches_planned(sizer: CallSizer, cadence: Cadence,
                     left: Optional[float]) -> int:
  """Batches up to and including the next one a hook observes, at most
  `left` (a fractional `steps` runs up to the next whole batch)."""
  planned = sizer.limit()
  for wanted in (cadence.steps_to_next(0), left):
    if wanted is not None:
      planned = min(planned, math.ceil(wanted))
  return planned


class EvaluationController:
  """Runs one evaluate() call's batches over a runner.

  With `options.automatic`, the batches no hook observes run many per call:
  the same metric updates in the same order, the same number of batches and
  the same progress lines as one batch per call.
  """

  def __init__(self, *, runner: BatchRunner, cadence: Cadence,
               options: BatchOptions,
               batch_done: Callable[[int], None] = lambda done: None):
    """Creates the controller.

    Args:
      runner: runs the batches.
      cadence: the hooks' cadences (batches move no step: asked at step 0).
      options: how the batches may run.
      batch_done: called with the count of batches done after each one.
    """
    self._runner = runner
    self._cadence = cadence
    self._options = options
    self._batch_done = batch_done
    self._sizer = CallSizer()

  def run(self) -> None:
    """Updates the metrics over `steps` batches or until the input ends."""
    steps, done = self._options.steps, 0
    single_first = self._options.single_batches_first()
    while not self._runner.stop_requested and (steps is None or done < steps):
      if self._options.automatic and done >= single_first:
        planned = _batches_planned(self._sizer, self._cadence,
                                   None if steps is None else steps - done)
        if planned > 1:
          ran = self._unobserved(planned - 1, done)
          done += ran
          if ran < planned - 1:
            return
      if self._runner.one() is None:
        return
      done += 1
      self._batch_done(done)

  def _unobserved(self, num_batches: int, done: int) -> int:
    """Runs batches no hook sees; the hooks count them as seen."""
    self._cadence.skip(num_batches)
    started = time.monotonic()
    ran = self._runner.many(num_batches)
    for completed in range(done + 1, done + ran + 1):
      self._batch_done(completed)
    if ran == num_batches:
      self._sizer.record(ran, time.monotonic() - started)
    return ran


class PredictionController:
  """Yields one predict() call's batches over a runner.

  With `options.automatic` (and a runner that can batch), the batches no
  hook observes run many per call, as in evaluation. The first call runs
  one batch (the first predictions come as soon as at one batch per call);
  later calls grow to about a second of work, so the input is read at most
  that far ahead of what the caller has taken.
  """

  def __init__(self, *, runner: PredictionRunner, cadence: Cadence,
               options: BatchOptions):
    self._runner = runner
    self._cadence = cadence
    self._options = options
    self._sizer = CallSizer(first=1)

  def batches(self) -> Iterator[Dict[str, Any]]:
    """Each batch's fetches, until the input ends or a hook stops."""
    batched = self._options.automatic
    single_first = self._options.single_batches_first()
    done = 0
    while not self._runner.stop_requested:
      if batched and done >= single_first:
        planned = _batches_planned(self._sizer, self._cadence, None)
        # (Asked only now: a predict() of one batch pays no pruning for it.)
        batched = planned == 1 or self._runner.can_batch()
        if planned > 1 and batched:
          batches, ended = self._unobserved(planned - 1)
          done += len(batches)
          yield from batches
          if ended:
            return
      started = time.monotonic()
      values = self._runner.one()
      if values is None:
        return
      if batched and self._sizer.limit() == 1:
        self._sizer.record(1, time.monotonic() - started)
      done += 1
      yield values

  def _unobserved(self, num_batches: int
                 ) -> Tuple[List[Dict[str, Any]], bool]:
    """Predicts batches no hook sees; the hooks count them as seen."""
    started = time.monotonic()
    batches, ended = self._runner.many_predictions(num_batches)
    self._sizer.record(len(batches), time.monotonic() - started)
    self._cadence.skip(len(batches))
    return batches, ended
