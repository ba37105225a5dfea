"""The training controller's outer loop, with stand-in runners (no model)."""

import math

import pytest
import tensorflow as tf

from estimator_compat.engines.controller import StepReports
from estimator_compat.engines.controller import StepsRun
from estimator_compat.engines.controller import TrainingController


class _Runner:
  """Runs steps by adding to the global step (or not: a broken train_op)."""

  def __init__(self, global_step, advances=True, losses=None, ahead=0):
    self.variable = global_step
    self.advances = advances
    self.losses = list(losses or [])
    self.calls = []
    self.ahead = ahead  # Steps "in flight", reported only when settled.
    self.settles = 0

  def train(self, *, num_steps, steps_left, fetches):
    del steps_left, fetches
    self.calls.append(num_steps)
    if self.advances:
      self.variable.assign_add(num_steps)
    loss = self.losses.pop(0) if self.losses else 1.0
    return StepsRun(steps=num_steps, loss=loss, values={})

  def global_step(self, counted):
    return counted

  def settle(self):
    self.settles += 1
    settled, self.ahead = self.ahead, 0
    if self.advances:
      self.variable.assign_add(settled)
    return settled

  def finish(self):
    return 0


class _Hooks:

  def __init__(self, stop_at_call=None):
    self.steps = []
    self.stop_at_call = stop_at_call

  @property
  def stop_requested(self):
    return self.stop_at_call is not None and len(self.steps) >= (
        self.stop_at_call)

  def before_call(self):
    return []

  def after_call(self, keys, run, step):
    del keys, run
    self.steps.append(step)

  def end(self):
    pass


class _Checkpoints:

  def __init__(self, every=None):
    self.every = every
    self.saved = []
    self.last = 0

  def begin(self):
    pass

  def due(self, step):
    return bool(self.every) and step - self.last >= self.every

  def steps_to_next(self, step):
    return self.last + self.every - step if self.every else None

  def after_step(self, step):
    if self.due(step):
      self.last = step
      self.saved.append(step)
    return False

  def end(self):
    pass


def _run(runner, hooks=None, checkpoints=None, **kwargs):
  args = dict(steps=None, max_steps=None, steps_per_loop=1)
  args.update(kwargs)
  return TrainingController(
      runner=runner, hooks=hooks or _Hooks(),
      checkpoints=checkpoints or _Checkpoints(),
      global_step=runner.variable, **args).run()


def test_calls_are_clamped_to_steps_and_steps_per_loop():
  step = tf.Variable(3, dtype=tf.int64)
  runner, hooks = _Runner(step), _Hooks()
  _run(runner, hooks, steps=5, steps_per_loop=2)
  assert runner.calls == [2, 2, 1]
  assert hooks.steps == [5, 7, 8]
  assert int(step.numpy()) == 8


def test_guard_advances_a_step_the_train_op_does_not():
  step = tf.Variable(0, dtype=tf.int64)
  runner = _Runner(step, advances=False)
  _run(runner, max_steps=5, steps_per_loop=2)
  assert runner.calls == [2, 2, 1]
  assert int(step.numpy()) == 5


def test_checkpoint_settles_work_in_flight_first():
  step = tf.Variable(0, dtype=tf.int64)
  runner, checkpoints = _Runner(step, ahead=3), _Checkpoints(every=2)
  _run(runner, checkpoints=checkpoints, max_steps=4)
  # At step 2 a save is due: the 3 steps in flight are settled and counted.
  assert runner.settles == 1
  assert checkpoints.saved == [5]


def test_hook_stop_request_ends_training():
  step = tf.Variable(0, dtype=tf.int64)
  runner = _Runner(step)
  assert _run(runner, _Hooks(stop_at_call=2), steps=10) == 1.0
  assert runner.calls == [1, 1]


def test_nan_loss_raises_when_asked():
  step = tf.Variable(0, dtype=tf.int64)
  with pytest.raises(tf.compat.v1.train.NanLossDuringTrainingError):
    _run(_Runner(step, losses=[1.0, math.nan]), steps=5, check_nan=True)
  # Without check_nan (the hooks hold a NanTensorHook) the loop goes on.
  assert math.isnan(_run(_Runner(tf.Variable(0, dtype=tf.int64),
                                 losses=[math.nan]), steps=1))


class _Cadence:
  """Hooks that need no step (an automatic run plans by the others)."""
  checks_nan = False

  def __init__(self):
    self.skipped = 0

  def steps_to_next(self, step):
    del step
    return None

  def skip(self, steps):
    self.skipped += steps

  def nan_seen(self, loss_value):
    raise AssertionError(loss_value)


def test_automatic_calls_end_at_log_lines_when_the_runner_cannot_advance():
  step = tf.Variable(0, dtype=tf.int64)
  runner, cadence = _Runner(step), _Cadence()
  reports = StepReports(log_step_count_steps=5, save_summary_steps=None,
                        start=0, summary_dir=None)
  _run(runner, steps=12, steps_per_loop=None, cadence=cadence,
       reports=reports)
  assert runner.calls == [5, 5, 2]
  assert cadence.skipped == 4 + 4 + 1
  assert int(step.numpy()) == 12
