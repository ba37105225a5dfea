"""The PS loop's wait for a finished closure (no cluster started).

These cases pin what the loop does when that wait fails, which on a real
cluster happens only in the short window between a closure finishing and
its worker being killed, and how a closure's NaN loss ends the call.
"""

import pytest
import tensorflow as tf
from tensorflow.python.distribute.coordinator import remote_value  # pylint: disable=g-direct-tensorflow-import

from estimator_compat.engines.function import ps_runner
from estimator_compat.errors import UnsupportedOnFunctionEngine


class _Remote:
  """Stands in for a RemoteValue: a status, an error, a fetch."""

  def __init__(self, status, error=None, value=None, fetch_error=None):
    self._status = status
    self._error = error
    self._value = value
    self._fetch_error = fetch_error

  def fetch(self):
    if self._fetch_error is not None:
      raise self._fetch_error
    return self._value


class _Step:

  def __init__(self, ps_alive=True):
    self._alive = ps_alive

  def numpy(self):
    if not self._alive:
      raise tf.errors.UnavailableError(None, None, "ps:0 is gone")
    return 7


_WORKER_GONE = tf.errors.UnavailableError(None, None, "worker:1 is gone")
_READY = remote_value.RemoteValueStatus.READY


def test_a_finished_closure_is_waited_for():
  ps_runner.wait_for(_Remote(_READY), _Step())


def test_a_worker_lost_after_finishing_is_survived():
  remote = _Remote(_READY, fetch_error=_WORKER_GONE)
  ps_runner.wait_for(remote, _Step())


def test_a_lost_ps_is_raised_even_when_the_closure_finished():
  remote = _Remote(_READY, fetch_error=_WORKER_GONE)
  with pytest.raises(tf.errors.UnavailableError, match="ps:0"):
    ps_runner.wait_for(remote, _Step(ps_alive=False))


def test_a_closure_that_failed_is_raised():
  error = tf.errors.UnavailableError(None, None, "closure failed")
  remote = _Remote(_READY, error=error, fetch_error=error)
  with pytest.raises(tf.errors.UnavailableError, match="closure failed"):
    ps_runner.wait_for(remote, _Step())


def test_coordinator_error_records_are_cut_to_their_first_and_last_line():
  # pylint: disable=g-import-not-at-top
  import logging
  from estimator_compat.engines.function import coordinator_log
  record = logging.LogRecord(
      "tensorflow", logging.ERROR, "cluster_coordinator.py", 1,
      "Remote function on worker %s failed with %r:%s\n"
      "It is treated as a transient connectivity failure for now.",
      ("/job:worker/task:1", "UnavailableError()",
       "Graph execution error:\n\nDetected at node x\n" + "noise\n" * 50),
      None)
  assert coordinator_log.ShortRemoteErrors().filter(record)
  message = record.getMessage()
  assert message.startswith(
      "Remote function on worker /job:worker/task:1 failed with")
  assert message.endswith("treated as a transient connectivity failure for "
                          "now.")
  assert "noise" not in message and len(message.splitlines()) == 1


class _Coordinator:
  """Stands in for a ClusterCoordinator: records schedules, joins."""

  def __init__(self, losses=(), join_error=None):
    self.scheduled = []
    self.joins = 0
    self._losses = list(losses)
    self._join_error = join_error

  def schedule(self, function, args):
    self.scheduled.append(int(args[1].numpy()))
    loss = self._losses.pop(0)
    if isinstance(loss, Exception):
      return _Remote(_READY, error=loss, fetch_error=loss)
    return _Remote(_READY)

  def join(self):
    self.joins += 1
    if self._join_error is not None:
      error, self._join_error = self._join_error, None  # Raised once.
      raise error


class _Setup:
  model_dir = None


def _runner(coordinator, tmp_path, num_workers=2, last_loss=None):
  setup = _Setup()
  setup.model_dir = str(tmp_path)
  return ps_runner.PsRunner(
      setup=setup, coordinator=coordinator, step_function=None,
      iterator="iterator", num_workers=num_workers,
      global_step=tf.Variable(5, dtype=tf.int64), last_loss=last_loss)


def test_one_closure_per_worker_stays_in_flight(tmp_path):
  coordinator = _Coordinator(losses=[0.5, 0.4, 0.3, 0.2])
  runner = _runner(coordinator, tmp_path)
  first = runner.train(num_steps=10, steps_left=None, fetches=())
  assert coordinator.scheduled == [10, 10]  # both workers busy
  assert (first.steps, first.loss) == (10, None)  # not fetched per closure
  second = runner.train(num_steps=10, steps_left=None, fetches=())
  assert coordinator.scheduled == [10, 10, 10]  # refilled the free worker
  assert second.steps == 10
  assert runner.settle() == 10  # the one still in flight
  assert runner.finish() == 0  # nothing left


def test_steps_left_caps_what_is_scheduled(tmp_path):
  coordinator = _Coordinator(losses=[1.0, 2.0])
  runner = _runner(coordinator, tmp_path)
  run = runner.train(num_steps=10, steps_left=14, fetches=())
  assert coordinator.scheduled == [10, 4] and run.steps == 10
  run = runner.train(num_steps=10, steps_left=4, fetches=())
  assert coordinator.scheduled == [10, 4] and run.steps == 4
  assert runner.global_step(19) == 19


def test_end_of_input_stops_training(tmp_path):
  ended = tf.errors.OutOfRangeError(None, None, "End of sequence")
  runner = _runner(_Coordinator(losses=[ended, 1.0]), tmp_path)
  assert runner.train(num_steps=3, steps_left=None, fetches=()) is None
  # Stopped early: the closure in flight ends its input; its steps count.
  runner = _runner(_Coordinator(losses=[1.0, 2.0], join_error=ended),
                   tmp_path)
  runner.train(num_steps=3, steps_left=None, fetches=())
  assert runner.finish() == 3


def test_a_lost_ps_names_the_step_the_checkpoint_and_the_fix(tmp_path):
  lost = tf.errors.UnavailableError(None, None, "ps:0 is gone\nmore")
  runner = _runner(_Coordinator(losses=[lost, lost]), tmp_path)
  with pytest.raises(RuntimeError) as raised:
    with runner.lost_ps_stops_training():
      runner.train(num_steps=3, steps_left=None, fetches=())
  message = str(raised.value)
  assert "near global step 5: ps:0 is gone The last checkpoint is None" in (
      message)
  assert "Fix: restart the whole cluster" in message and "more" not in message
  runner = _runner(_Coordinator(losses=[1.0, 1.0], join_error=lost),
                   tmp_path)
  with runner.lost_ps_stops_training():
    runner.train(num_steps=3, steps_left=None, fetches=())
  with pytest.raises(RuntimeError, match="lost a task it cannot do without"):
    with runner.lost_ps_stops_training():
      runner.settle()


def test_a_lost_ps_met_reading_the_loss_is_the_same_clear_error(tmp_path):
  # CI met the lost ps first in the loss read for a log line: it raised the
  # bare gRPC error, without the fix.
  runner = _runner(_Coordinator(), tmp_path, last_loss=_Step(ps_alive=False))
  with pytest.raises(RuntimeError) as raised:
    with runner.lost_ps_stops_training():
      runner.latest_loss()
  assert "near global step 5: ps:0 is gone" in str(raised.value)
  assert "Fix: restart the whole cluster" in str(raised.value)
  assert raised.value.__context__ is None or raised.value.__suppress_context__


def _nan_error():
  return tf.errors.InvalidArgumentError(
      None, None, f"assertion failed: [{ps_runner.NAN_MARKER}] [nan]")


def test_a_closure_failing_on_a_nan_loss_raises_the_estimators_error(
    tmp_path):
  coordinator = _Coordinator(losses=[_nan_error(), 1.0],
                             join_error=_nan_error())
  runner = _runner(coordinator, tmp_path)
  with pytest.raises(tf.compat.v1.train.NanLossDuringTrainingError):
    runner.train(num_steps=1, steps_left=None, fetches=())
  # The coordinator's copy of the failure is joined away: a later call's
  # closures do not meet it.
  assert coordinator.joins == 1
  coordinator.join()


def test_a_nan_loss_found_when_settling_raises_before_any_save(tmp_path):
  runner = _runner(_Coordinator(losses=[1.0, 1.0], join_error=_nan_error()),
                   tmp_path)
  runner.train(num_steps=1, steps_left=None, fetches=())
  with pytest.raises(tf.compat.v1.train.NanLossDuringTrainingError):
    runner.settle()


def test_other_closure_errors_are_raised_as_they_are(tmp_path):
  error = tf.errors.InvalidArgumentError(None, None, "a shape is wrong")
  runner = _runner(_Coordinator(losses=[error, 1.0]), tmp_path)
  with pytest.raises(tf.errors.InvalidArgumentError, match="shape is wrong"):
    runner.train(num_steps=1, steps_left=None, fetches=())


def test_the_loss_is_read_on_demand_from_its_variable(tmp_path):
  assert _runner(_Coordinator(), tmp_path).latest_loss() is None
  runner = _runner(_Coordinator(), tmp_path, last_loss=tf.Variable(0.75))
  assert runner.latest_loss() == 0.75


class _LossHook(tf.compat.v1.train.SessionRunHook):
  """Asks for a tensor other than the global step."""

  def begin(self):
    self._other = tf.constant(1.0, name="not_the_step")

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(self._other)


def test_hooks_may_fetch_only_the_global_step():
  hooks = ps_runner.GlobalStepHooks([_LossHook()],
                                    tf.Variable(0, dtype=tf.int64))
  with pytest.raises(UnsupportedOnFunctionEngine) as raised:
    hooks.before_call()
  assert "A hook asked for 'not_the_step:0'" in str(raised.value)
  assert "Fix: log with RunConfig(log_step_count_steps=...)" in str(
      raised.value)
