"""The inner training loop under ParameterServerStrategy: coordinator closures.

`PsRunner.train(num_steps=N)` keeps one closure of at most N steps in flight
per worker and returns when the oldest has finished (with its loss); the
controller (engines/controller.py) decides N and everything around the call.
At a checkpoint the controller settles the closures in flight, so that the
saved step is exact. `GlobalStepHooks` runs the call's SessionRunHooks with
the global step only: steps run remotely and asynchronously.

A worker that dies is survived: the coordinator reschedules its closures on
the others. A lost ps is an error that names the fix.
"""

import collections
from typing import Any, Optional, Sequence

import numpy as np
import tensorflow as tf
from tensorflow.python.distribute.coordinator import remote_value  # pylint: disable=g-direct-tensorflow-import

from estimator_compat.checkpoints import checkpoint_reading
from estimator_compat.front import tf_logging as logging
from estimator_compat.engines.controller import StepsRun
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


def fetch_loss(remote, global_step: tf.Variable) -> Optional[float]:
  """The loss a finished closure returned; None if its worker is gone.

  A closure's result stays on its worker until fetched. A worker lost after
  its closure finished (its steps applied on the ps) takes the loss with it:
  the steps count, the loss is unknown. Any other error is raised; one that
  comes from a lost ps is raised by reading the global step (on a ps).
  """
  try:
    return float(remote.fetch())
  except _LOST_TASK_ERRORS:
    finished = (getattr(remote, "_status", None) is
                remote_value.RemoteValueStatus.READY and
                getattr(remote, "_error", True) is None)
    if not finished:
      raise
    global_step.numpy()  # Raises if the ps is gone too.
    logging.warning("A worker was lost after it finished its steps; they "
                    "count, their loss is unknown.")
    return None


class PsRunner:
  """Schedules step closures on the workers through a ClusterCoordinator."""

  def __init__(self, *, setup: ModelSetup, coordinator: Any, step_function,
               iterator: Any, num_workers: int, global_step: tf.Variable):
    """Creates the runner.

    Args:
      setup: the model setup (model_dir names the last checkpoint in errors).
      coordinator: the ClusterCoordinator.
      step_function: tf.function(iterator, num_steps) -> last loss.
      iterator: the per-worker input iterator.
      num_workers: closures kept in flight (one per worker).
      global_step: the global step variable (on a ps).
    """
    self._setup = setup
    self._coordinator = coordinator
    self._step_function = step_function
    self._iterator = iterator
    self._num_workers = num_workers
    self._global_step = global_step
    self._inflight = collections.deque()  # (RemoteValue, steps), in order.
    self._step = int(global_step.numpy())

  def train(self, *, num_steps: int, steps_left: Optional[int],
            fetches: Sequence[str]) -> Optional[StepsRun]:
    """Fills the workers' closures; returns the oldest one's steps and loss.

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
            self._step_function,
            args=(self._iterator, tf.constant(n, tf.int64))), n))
      remote, scheduled = self._inflight.popleft()
      loss = fetch_loss(remote, self._global_step)
    except tf.errors.OutOfRangeError:
      logging.info("Input ended; stopping training.")
      return None
    except _LOST_TASK_ERRORS as e:
      raise RuntimeError(lost_ps_message(self._setup, self._step, e)) from None
    return StepsRun(steps=scheduled, loss=loss, values={})

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
    except _LOST_TASK_ERRORS as e:
      raise RuntimeError(lost_ps_message(self._setup, self._step, e)) from None


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

  # The controller's hook port (engines/controller.py HookPort).

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
