"""The inner training loop under ParameterServerStrategy: coordinator closures.

`PsRunner.train(num_steps=N)` keeps one closure of at most N steps in flight
per worker and returns when the oldest has finished; the controller
(engines/controller.py) decides N and everything around the call. At a
checkpoint the controller settles the closures in flight, so that the saved
step is exact. `GlobalStepHooks` runs the call's SessionRunHooks with the
global step only: steps run remotely and asynchronously.

A closure returns nothing: a returned value is copied to the coordinator
after every closure, which cost a one-step-per-closure job 7-23% of its
steps/s (docs/speed.md). Each closure stores its last loss in a variable on
a ps, read only when a log line or summary needs it (`latest_loss`), and
fails on a non-finite loss with NAN_MARKER in its message, which the runner
turns into the Estimator's NanLossDuringTrainingError.

A worker that dies is survived: the coordinator reschedules its closures on
the others. A lost ps is an error that names the fix.
"""

import collections
import contextlib
from typing import Any, Dict, Iterator, Optional, Sequence

import numpy as np
import tensorflow as tf
from tensorflow.python.distribute.coordinator import remote_value  # pylint: disable=g-direct-tensorflow-import

from estimator_compat.checkpoints import checkpoint_reading
from estimator_compat.front import tf_logging as logging
from estimator_compat.engines.runner import StepsRun
from estimator_compat.engines.function.session import EagerSession, HookRunner
from estimator_compat.errors import UnsupportedOnFunctionEngine
from estimator_compat.front.model_fn_call import ModelSetup

_PS_HOOK_FIX = (
    "On parameter-server training, steps run remotely and asynchronously, so "
    "hooks can fetch only the global step. Fix: log with "
    "RunConfig(log_step_count_steps=...), act on checkpoints with "
    "saving_listeners, or run this hook under MirroredStrategy / "
    "MultiWorkerMirroredStrategy.")

_LOST_TASK_ERRORS = (tf.errors.UnavailableError, tf.errors.AbortedError,
                     tf.errors.CancelledError)


def lost_ps_message(setup: ModelSetup, step: int, error: Exception) -> str:
  """The error for a lost ps task near global step `step`."""
  latest = checkpoint_reading.latest_checkpoint(setup.model_dir)
  return (
      f"Parameter-server training lost a task it cannot do without (a ps; "
      f"lost workers are survived) near global step {step}: "
      f"{str(error).splitlines()[0][:300]} The last checkpoint is {latest}. "
      "Fix: restart the whole cluster (every task, same TF_CONFIG roles); "
      "training resumes from the last checkpoint.")


# In the message of the error a closure fails with on a non-finite loss.
NAN_MARKER = "estimator_compat: the loss is not finite"


def is_nan_error(error: Exception) -> bool:
  """True for the error a closure fails with on a non-finite loss."""
  return isinstance(error, tf.errors.InvalidArgumentError) and (
      NAN_MARKER in str(error))


def wait_for(remote, global_step: tf.Variable) -> None:
  """Waits for a closure to finish; survives its worker lost just after.

  A worker lost after its closure finished (its steps applied on the ps)
  is survived: the steps count. Any other error is raised; one that comes
  from a lost ps is raised by reading the global step (on a ps).
  """
  try:
    remote.fetch()  # Nothing to copy: the closure returns nothing.
  except _LOST_TASK_ERRORS:
    finished = (getattr(remote, "_status", None) is
                remote_value.RemoteValueStatus.READY and
                getattr(remote, "_error", True) is None)
    if not finished:
      raise
    global_step.numpy()  # Raises if the ps is gone too.
    logging.warning("A worker was lost after it finished its steps; they "
                    "count.")


class PsRunner:
  """Schedules step closures on the workers through a ClusterCoordinator."""

  def __init__(self, *, setup: ModelSetup, coordinator: Any, step_function,
               iterator: Any, num_workers: int, global_step: tf.Variable,
               last_loss: Optional[tf.Variable] = None):
    """Creates the runner.

    Args:
      setup: the model setup (model_dir names the last checkpoint in errors).
      coordinator: the ClusterCoordinator.
      step_function: tf.function(iterator, num_steps), returning nothing.
      iterator: the per-worker input iterator.
      num_workers: closures kept in flight (one per worker).
      global_step: the global step variable (on a ps).
      last_loss: the variable each closure stores its last loss in.
    """
    self._setup = setup
    self._coordinator = coordinator
    self._step_function = step_function
    self._iterator = iterator
    self._num_workers = num_workers
    self._global_step = global_step
    self._last_loss = last_loss
    self._inflight = collections.deque()  # (RemoteValue, steps), in order.
    self._step = int(global_step.numpy())
    self._num_steps: Dict[int, tf.Tensor] = {}

  @contextlib.contextmanager
  def lost_ps_stops_training(self) -> Iterator[None]:
    """Turns a lost ps, met by anything inside, into one clear error.

    Every wait, join and read of a ps variable (the global step, the last
    loss, a checkpoint's values) meets a lost ps task; whichever meets it
    first raises the same error, naming the last checkpoint and the fix.
    """
    try:
      yield
    except _LOST_TASK_ERRORS as e:
      raise RuntimeError(lost_ps_message(self._setup, self._step, e)) from None

  def train(self, *, num_steps: int, steps_left: Optional[int],
            fetches: Sequence[str]) -> Optional[StepsRun]:
    """Fills the workers' closures; returns the oldest one's steps.

    One closure per worker stays in flight: each worker starts its next
    steps as soon as its last ones finish, as the Estimator's workers ran
    free. (Joining every round made all workers start each round from the
    same variables; it cost the seed program ~2 points of accuracy with 2
    workers, see docs/decisions.md.)
    """
    del fetches  # GlobalStepHooks answers them from the step.
    try:
      while len(self._inflight) < self._num_workers:
        pending = sum(n for _, n in self._inflight)
        n = num_steps if steps_left is None else min(num_steps,
                                                     steps_left - pending)
        if n <= 0:
          break
        self._inflight.append((self._coordinator.schedule(
            self._step_function, args=(self._iterator, self._constant(n))),
                               n))
      remote, scheduled = self._inflight.popleft()
      wait_for(remote, self._global_step)
    except tf.errors.OutOfRangeError:
      logging.info("Input ended; stopping training.")
      return None
    except tf.errors.InvalidArgumentError as e:
      if not is_nan_error(e):
        raise
      self._nan_loss()
    return StepsRun(steps=scheduled, loss=None, values={})

  def latest_loss(self) -> Optional[float]:
    """The loss the last closure to finish stored (a read on a ps)."""
    if self._last_loss is None:
      return None
    return float(self._last_loss.numpy())

  def _constant(self, n: int) -> tf.Tensor:
    if n not in self._num_steps:
      self._num_steps[n] = tf.constant(n, tf.int64)
    return self._num_steps[n]

  def _nan_loss(self) -> None:
    """Lets the closures in flight end, then raises as NanTensorHook did."""
    self._inflight.clear()
    try:
      # The coordinator keeps the failure until a join raises it: the next
      # train() call's first closure must not meet it.
      self._coordinator.join()
    except tf.errors.InvalidArgumentError as e:
      if not is_nan_error(e):
        raise
    except tf.errors.OutOfRangeError:
      pass
    raise tf.compat.v1.train.NanLossDuringTrainingError()

  def global_step(self, counted: int) -> int:
    """The counted step: reading it from the ps costs a round trip."""
    self._step = counted
    return counted

  def settle(self) -> int:
    """Waits for every closure in flight; returns their steps."""
    self._join()
    settled = sum(n for _, n in self._inflight)
    self._inflight.clear()
    return settled

  def finish(self) -> int:
    """Lets the closures in flight finish (stopped early); their steps."""
    if not self._inflight:
      return 0
    self._join()
    settled = sum(n for _, n in self._inflight)
    self._inflight.clear()
    return settled

  def _join(self) -> None:
    """Waits for every scheduled closure; a lost ps becomes the clear error."""
    try:
      self._coordinator.join()
    except tf.errors.OutOfRangeError:
      pass  # End of input: what ran is counted by the caller.
    except tf.errors.InvalidArgumentError as e:
      if not is_nan_error(e):
        raise
      self._nan_loss()  # Before any checkpoint of the NaN's step is written.


class GlobalStepHooks:
  """Runs SessionRunHooks once per call with the global step only."""

  def __init__(self, hooks: Sequence[Any], global_step: tf.Variable):
    self._graph = tf.Graph()
    with self._graph.as_default():
      self._step = tf.compat.v1.train.get_or_create_global_step()
      self._read = tf.identity(self._step, name="global_step_read")
      self._graph.add_to_collection("__global_step_read_key",
                                    self._read)
      self.runner = HookRunner(hooks)
      self.runner.begin()
    self._global_step = global_step
    self._names = {self._step.name, self._read.name,
                   self._step.name.split(":")[0]}
    self.runner.after_create_session(EagerSession(
        self._graph, lambda fetches: tf.nest.map_structure(self._value,
                                                           fetches)))

  def _is_global_step(self, name) -> bool:
    base = str(name).split(":")[0]
    return name in self._names or base == "global_step" or base.startswith(
        "global_step/")

  def _value(self, item):
    name = getattr(item, "name", item)
    if self._is_global_step(name):
      return self._global_step.numpy()
    raise UnsupportedOnFunctionEngine(
        f"A hook asked for {name!r}. {_PS_HOOK_FIX}")

  def before(self) -> Sequence[str]:
    """The hooks' before_run; the keys they asked for (the step only)."""
    keys = self.runner.before_run(self._graph, {})
    for key in keys:
      name = key.split(":", 1)[1]
      if not self._is_global_step(name):
        raise UnsupportedOnFunctionEngine(
            f"A hook asked for {name!r}. {_PS_HOOK_FIX}")
    return keys

  def after(self, keys: Sequence[str], step: int) -> None:
    """The hooks' after_run at global step `step`."""
    self.runner.after_run({key: np.int64(step) for key in keys})

  # The controller's hook port (engines/runner.py HookPort).

  @property
  def stop_requested(self) -> bool:
    return self.runner.stop_requested

  def before_call(self) -> Sequence[str]:
    return self.before()

  def after_call(self, keys: Sequence[str], run: StepsRun, step: int) -> None:
    del run  # Only the step can be observed.
    self.after(keys, step)

  def end(self) -> None:
    self.runner.end()
