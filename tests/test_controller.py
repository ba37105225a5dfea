"""The training controller's outer loop, with stand-in runners (no model)."""

import math

import pytest
import tensorflow as tf

from estimator_compat.engines.controller import SINGLE_BATCHES_FIRST
from estimator_compat.engines.controller import BatchOptions
from estimator_compat.engines.controller import EvaluationController
from estimator_compat.engines.controller import PredictionController
from estimator_compat.engines.reports import StepReports
from estimator_compat.engines.runner import StepsRun
from estimator_compat.engines.controller import TrainingController
from estimator_compat.engines.controller import TrainOptions


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


def _run(runner, hooks=None, checkpoints=None, *, steps=None, max_steps=None,
         steps_per_loop=1, check_nan=False, **kwargs):
  return TrainingController(
      runner=runner, hooks=hooks or _Hooks(),
      checkpoints=checkpoints or _Checkpoints(),
      global_step=runner.variable,
      options=TrainOptions(steps=steps, max_steps=max_steps,
                           steps_per_loop=steps_per_loop,
                           check_nan=check_nan), **kwargs).run()


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


class _Batches:
  """Evaluation/prediction batches 0..n-1; records how each one ran."""

  def __init__(self, n, cadence=None, stop_after=None, can_batch=True):
    self.left = list(range(n))
    self.cadence = cadence
    self.stop_after = stop_after
    self.batchable = can_batch
    self.observed, self.unobserved, self.calls = [], [], []

  @property
  def stop_requested(self):
    return self.stop_after is not None and len(self.observed) >= (
        self.stop_after)

  def one(self):
    if self.stop_requested or not self.left:
      return None
    self.calls.append(1)
    batch = self.left.pop(0)
    self.observed.append(batch)
    if self.cadence is not None:
      self.cadence.skip(1)  # the hooks' own count of a batch they saw
    return {"batch": batch}

  def many(self, num_batches):
    self.calls.append(num_batches)
    ran, self.left = self.left[:num_batches], self.left[num_batches:]
    self.unobserved += ran
    return len(ran)

  def can_batch(self):
    return self.batchable

  def many_predictions(self, num_batches):
    self.calls.append(num_batches)
    ran, self.left = self.left[:num_batches], self.left[num_batches:]
    self.unobserved += ran
    return [{"batch": b} for b in ran], not self.left


class _EveryN:
  """A hook cadence that observes every n-th batch."""

  checks_nan = False

  def __init__(self, n):
    self.n, self.seen = n, 0

  def steps_to_next(self, step):
    del step
    return self.n - self.seen % self.n

  def skip(self, steps):
    self.seen += steps

  def nan_seen(self, loss_value):
    del loss_value
    return False


def test_evaluation_batches_run_one_per_call_where_not_automatic():
  runner, done = _Batches(5), []
  EvaluationController(runner=runner, cadence=_EveryN(1000),
                       options=BatchOptions(automatic=False),
                       batch_done=done.append).run()
  assert runner.calls == [1] * 5 and runner.observed == [0, 1, 2, 3, 4]
  assert done == [1, 2, 3, 4, 5]


def test_evaluation_runs_single_batches_first_then_many_per_call():
  runner, done = _Batches(SINGLE_BATCHES_FIRST + 40), []
  EvaluationController(runner=runner, cadence=_EveryN(1000),
                       options=BatchOptions(automatic=True),
                       batch_done=done.append).run()
  assert runner.calls[:SINGLE_BATCHES_FIRST] == [1] * SINGLE_BATCHES_FIRST
  assert max(runner.calls) > 1  # then batched
  assert sorted(runner.observed + runner.unobserved) == list(
      range(SINGLE_BATCHES_FIRST + 40))
  assert done == list(range(1, SINGLE_BATCHES_FIRST + 41))


def test_evaluation_batches_from_the_first_when_the_call_is_known_long():
  # Known to run more than SINGLE_BATCHES_FIRST batches: no single batches
  # first. A fractional `steps` runs up to the next whole batch; the hooks
  # see every 7th batch.
  steps = SINGLE_BATCHES_FIRST + 5.5
  cadence = _EveryN(7)
  runner = _Batches(200, cadence)
  EvaluationController(runner=runner, cadence=cadence,
                       options=BatchOptions(automatic=True, steps=steps)).run()
  ran = runner.observed + runner.unobserved
  assert sorted(ran) == list(range(math.ceil(steps)))
  assert runner.calls[0] > 1
  assert [b for b in runner.observed if (b + 1) % 7] == [
      math.ceil(steps) - 1]  # only the last, cut short by `steps`
  assert all((b + 1) % 7 for b in runner.unobserved)


def test_evaluation_stops_when_the_input_ends_inside_a_batched_call():
  runner, done = _Batches(50), []
  EvaluationController(runner=runner, cadence=_EveryN(1000),
                       options=BatchOptions(automatic=True, steps=100,
                                            input_batches=None),
                       batch_done=done.append).run()
  assert done == list(range(1, 51))


def test_prediction_yields_every_batch_in_order_and_stops_on_a_hook():
  cadence = _EveryN(10)
  runner = _Batches(100, cadence, stop_after=3)
  got = [v["batch"] for v in PredictionController(
      runner=runner, cadence=cadence,
      options=BatchOptions(automatic=True, input_batches=100)).batches()]
  assert got == list(range(len(got))) and len(runner.observed) == 3
  # Every batch the hooks act on ran observed (others may too: the first
  # call is one batch, so the first predictions come at once).
  assert runner.unobserved and all((b + 1) % 10 for b in runner.unobserved)


def test_prediction_falls_back_to_one_per_call_when_it_cannot_batch():
  runner = _Batches(40, can_batch=False)
  got = [v["batch"] for v in PredictionController(
      runner=runner, cadence=_EveryN(1000),
      options=BatchOptions(automatic=True, input_batches=40)).batches()]
  assert got == list(range(40)) and runner.calls == [1] * 40


class _LossOnDemandRunner(_Runner):
  """Fetches no loss per call; reads the latest one when asked (PS)."""

  def __init__(self, global_step):
    super().__init__(global_step)
    self.reads = []

  def train(self, *, num_steps, steps_left, fetches):
    run = super().train(num_steps=num_steps, steps_left=steps_left,
                        fetches=fetches)
    return StepsRun(steps=run.steps, loss=None, values={})

  def latest_loss(self):
    step = int(self.variable.numpy())
    self.reads.append(step)
    return step / 10.0


def test_a_loss_on_demand_is_read_only_where_a_report_needs_it(tmp_path):
  step = tf.Variable(0, dtype=tf.int64)
  runner = _LossOnDemandRunner(step)
  reports = StepReports(log_step_count_steps=4, save_summary_steps=3,
                        start=0, summary_dir=str(tmp_path))
  final = _run(runner, steps=8, reports=reports)
  # The first call's summary, the summaries at 3 and 6, the log lines at 4
  # and 8, then the final loss.
  assert runner.reads == [1, 3, 4, 6, 8, 8]
  assert final == 0.8
  written = []
  for name in tmp_path.iterdir():
    for event in tf.compat.v1.train.summary_iterator(str(name)):
      written += [(event.step, round(v.simple_value, 3))
                  for v in event.summary.value if v.tag == "loss"]
  assert written == [(1, 0.1), (3, 0.3), (6, 0.6)]
