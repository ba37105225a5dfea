"""RunConfig(steps_per_loop=None): many steps per call, identical results.

A program with every standard hook trains with automatic steps per call and
with one step per call; checkpoints (every variable, bitwise), events files
(tags, steps, values), log lines and the values hooks saw must be the same,
and the automatic run must really have run many steps in some call.
"""

import glob
import logging
import os
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.engines import call_sizer
from estimator_compat.engines import controller
from estimator_compat.engines.function.sync_runner import SyncRunner
from estimator_compat.engines.function.traced_model import TracedModel
from tests import models

_train = tf.compat.v1.train


class _Lines(logging.Handler):
  """The "tensorflow" logger's lines, with times and the model_dir masked."""

  def __init__(self, model_dir):
    super().__init__(logging.INFO)
    self.model_dir = str(model_dir)
    self.lines = []

  def emit(self, record):
    if record.getMessage().startswith("From "):
      return  # TF's deprecation notes: once per process.
    line = record.getMessage().replace(self.model_dir, "MODEL_DIR")
    line = re.sub(r"\(\d+\.\d+ sec\)", "(T sec)", line)
    line = re.sub(r"/sec: \S+", "/sec: R", line)
    self.lines.append(f"{record.levelname}: {line}")


def _linear_fn(features, labels, mode, params):
  """A linear classifier: a NaN input gives a NaN loss (no relu hides it)."""
  del params
  logits = tf.compat.v1.layers.dense(features["x"], models.CLASSES)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _model_fn(model_dir, seen, base_fn=models.classifier_fn):
  """classifier_fn plus standard hooks of its own.

  (The engine adds StepCounterHook, SummarySaverHook, LoggingTensorHook,
  StopAtStepHook and NanTensorHook; a user's StepCounterHook cannot begin()
  on the function engine, its global step has no `.op`.)
  """

  def model_fn(features, labels, mode, params):
    spec = base_fn(features, labels, mode, params)
    if mode != tfe.ModeKeys.TRAIN or seen is None:
      return spec
    step = tf.compat.v1.train.get_global_step()
    kernel = tf.compat.v1.trainable_variables()[0]

    def record(values):
      seen.append({k: np.array(v) for k, v in values.items()})
      return f"seen {len(seen)}"

    extra = os.path.join(model_dir, "extra")
    hooks = [
        _train.LoggingTensorHook({"loss": spec.loss, "step": step,
                                  "kernel": kernel}, every_n_iter=7,
                                 formatter=record),
        _train.LoggingTensorHook({"loss": spec.loss}, every_n_iter=3),
        _train.SummarySaverHook(
            save_steps=4, output_dir=extra,
            summary_op=tf.compat.v1.summary.scalar("extra_loss", spec.loss)),
        _train.StopAtStepHook(last_step=35),
        _train.NanTensorHook(spec.loss, fail_on_nan_loss=False),
        _train.FinalOpsHook(kernel),
    ]
    return spec._replace(training_hooks=hooks)

  return model_fn


def _events(model_dir):
  """Per events folder: sorted (tag, step, value) and session-log events."""
  out = {}
  for path in glob.glob(os.path.join(model_dir, "**", "events.out.*"),
                        recursive=True):
    records = []
    for event in tf.compat.v1.train.summary_iterator(path):
      if event.HasField("session_log"):
        records.append(("session_log", event.step,
                        event.session_log.status))
      for value in event.summary.value:
        number = value.simple_value
        if value.tag.endswith("/sec"):
          number = None  # A rate: time, not a result.
        records.append((value.tag, event.step, number))
    out[os.path.relpath(os.path.dirname(path), model_dir)] = sorted(
        records, key=repr)
  return out


def _checkpoints(model_dir):
  """{checkpoint file prefix: {variable: value}} of every checkpoint kept."""
  out = {}
  for index in sorted(glob.glob(os.path.join(model_dir, "model.ckpt-*.index"))):
    prefix = index[:-len(".index")]
    reader = tf.train.load_checkpoint(prefix)
    out[os.path.basename(prefix)] = {
        name: reader.get_tensor(name)
        for name in reader.get_variable_to_shape_map()}
  return out


def _run(model_dir, steps_per_loop, monkeypatch, input_fn=None,
         base_fn=models.classifier_fn, own_hooks=True, **config):
  """Trains twice (steps=23, then to max_steps=40); what was observed."""
  calls = []
  advance = SyncRunner.advance

  def counted(self, **kwargs):
    done = advance(self, **kwargs)
    calls.append((kwargs["num_steps"], done.steps))
    return done

  monkeypatch.setattr(SyncRunner, "advance", counted)
  # Calls sized by the plan alone, not by time: on a loaded machine the
  # first batched call (its trace) took over a second and the call sizer
  # cut every later call to one step, so no call ran into the input's end.
  monkeypatch.setattr(call_sizer.CallSizer, "record",
                      lambda self, steps, seconds: None)
  seen = []
  lines = _Lines(model_dir)
  logger = tf.get_logger()
  level = logger.level
  logger.setLevel(logging.INFO)
  logger.addHandler(lines)
  est = tfe.Estimator(
      _model_fn(str(model_dir), seen if own_hooks else None, base_fn),
      model_dir=str(model_dir),
      config=tfe.RunConfig(**dict(
          dict(tf_random_seed=1, steps_per_loop=steps_per_loop,
               save_checkpoints_steps=5, save_summary_steps=6,
               log_step_count_steps=10, keep_checkpoint_max=100,
               engine="function"), **config)),
      params={})
  error = None
  try:
    est.train(input_fn or models.input_fn(), steps=23)
    est.train(input_fn or models.input_fn(), max_steps=40)
  except _train.NanLossDuringTrainingError as e:
    error = type(e)
  finally:
    logger.removeHandler(lines)
    logger.setLevel(level)
  return dict(checkpoints=_checkpoints(str(model_dir)),
              events=_events(str(model_dir)), lines=lines.lines, seen=seen,
              error=error), calls


def _assert_same(auto, single):
  assert auto["error"] == single["error"]
  assert list(auto["checkpoints"]) == list(single["checkpoints"])
  for name, variables in single["checkpoints"].items():
    assert sorted(auto["checkpoints"][name]) == sorted(variables)
    for variable, value in variables.items():
      np.testing.assert_array_equal(auto["checkpoints"][name][variable],
                                    value, err_msg=f"{name}: {variable}")
  assert auto["events"] == single["events"]
  assert auto["lines"] == single["lines"]
  assert len(auto["seen"]) == len(single["seen"])
  for got, want in zip(auto["seen"], single["seen"]):
    assert sorted(got) == sorted(want)
    for key in want:
      np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_every_standard_hook_sees_what_one_step_per_call_shows(
    tmp_path, monkeypatch):
  auto, auto_calls = _run(tmp_path / "auto", None, monkeypatch)
  single, single_calls = _run(tmp_path / "single", 1, monkeypatch)
  assert single_calls == []
  assert max(n for n, _ in auto_calls) > 1, auto_calls
  assert single["error"] is None
  assert "model.ckpt-35" in single["checkpoints"]  # StopAtStepHook(35).
  assert len(single["seen"]) == 6  # Iterations 0, 7, 14, 21 / 0, 7.
  assert any("extra_loss" in str(e) for e in single["events"].values())
  _assert_same(auto, single)


def _nan_input_fn(nan_row):
  x, y = models.data(rows=400)
  x[nan_row] = np.nan

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)

  return input_fn


def test_a_nan_loss_stops_at_its_step_inside_a_call(tmp_path, monkeypatch):
  # Row 16*7+3: the step from global step 7, which no hook observes (they
  # see the steps from 0, 4, 5, 9, ...).
  input_fn = _nan_input_fn(16 * 7 + 3)
  diverged_at = []
  after_run = _train.NanTensorHook.after_run

  def recorded(self, run_context, run_values):
    if np.isnan(run_values.results):
      diverged_at.append(int(run_context.session.run("global_step")))
    return after_run(self, run_context, run_values)

  monkeypatch.setattr(_train.NanTensorHook, "after_run", recorded)
  auto, auto_calls = _run(tmp_path / "auto", None, monkeypatch,
                          input_fn=input_fn, base_fn=_linear_fn,
                          own_hooks=False)
  single, _ = _run(tmp_path / "single", 1, monkeypatch, input_fn=input_fn,
                   base_fn=_linear_fn, own_hooks=False)
  assert single["error"] is _train.NanLossDuringTrainingError
  assert "ERROR: Model diverged with loss = NaN." in single["lines"]
  # The call that met it stopped there: fewer steps than planned.
  assert any(done < planned for planned, done in auto_calls), auto_calls
  assert diverged_at == [8, 8]  # The same step, either way.
  _assert_same(auto, single)


def test_the_end_of_input_inside_a_call(tmp_path, monkeypatch):
  x, y = models.data(rows=16 * 13)

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)

  auto, auto_calls = _run(tmp_path / "auto", None, monkeypatch,
                          input_fn=input_fn)
  single, _ = _run(tmp_path / "single", 1, monkeypatch, input_fn=input_fn)
  assert "model.ckpt-13" in single["checkpoints"]
  assert any(done < planned for planned, done in auto_calls), auto_calls
  _assert_same(auto, single)


class _UnknownHook(_train.SessionRunHook):

  def __init__(self):
    self.calls = 0

  def after_run(self, run_context, run_values):
    self.calls += 1


def test_a_hook_of_unknown_cadence_means_one_step_per_call(tmp_path):
  hook = _UnknownHook()
  est = models.estimator(tmp_path, engine="function")
  est.train(models.input_fn(), steps=12, hooks=[hook])
  assert hook.calls == 12


def test_steps_per_loop_none_is_the_default_and_the_graph_engine_takes_it(
    tmp_path):
  assert tfe.RunConfig().steps_per_loop is None
  est = models.estimator(tmp_path, engine="graph")
  est.train(models.input_fn(), steps=7)
  assert est.get_variable_value("global_step") == 7
  with pytest.raises(ValueError, match="integer >= 1 or None"):
    tfe.RunConfig(steps_per_loop=0)


def _counting_fn(features, labels, mode, params):
  """classifier_fn with a metric that counts the evaluated examples."""
  spec = models.classifier_fn(features, labels, mode, params)
  if mode != tfe.ModeKeys.EVAL:
    return spec
  metrics = dict(spec.eval_metric_ops)
  metrics["examples"] = tf.compat.v1.metrics.mean(
      tf.ones_like(labels, tf.float32), weights=None)
  metrics["label_sum"] = tf.compat.v1.metrics.mean(
      tf.cast(labels, tf.float32))
  return spec._replace(eval_metric_ops=metrics)


@pytest.mark.parametrize("steps,rows", [(5, 96), (None, 16 * 9 + 5),
                                        (40, 16 * 9 + 5)])
def test_evaluation_batches_many_steps_per_call_with_the_same_metrics(
    tmp_path, monkeypatch, steps, rows):
  calls = []
  repeat = TracedModel.repeat

  def counted(self, num_steps):
    calls.append(num_steps)
    return repeat(self, num_steps)

  monkeypatch.setattr(TracedModel, "repeat", counted)
  # Batched from the first batch on (an evaluate() runs
  # SINGLE_BATCHES_FIRST batches one per call first), so that the batched
  # path is compared with one batch per call on these few batches.
  monkeypatch.setattr(controller, "SINGLE_BATCHES_FIRST", 0)
  results = {}
  for spl in (None, 1):
    est = models.estimator(tmp_path, model_fn=_counting_fn,
                           engine="function", steps_per_loop=spl)
    if spl is None:
      est.train(models.input_fn(), steps=3)
    logged = []
    hook = _train.LoggingTensorHook({"step": "global_step"}, every_n_iter=4,
                                    formatter=lambda v, out=logged: str(
                                        out.append(dict(v))))
    results[spl] = est.evaluate(
        models.input_fn(num_epochs=1, rows=rows), steps=steps, hooks=[hook])
    results[spl]["logged"] = len(logged)
  assert max(calls) > 1
  assert results[None] == results[1]
  batches = min(steps or 100, -(-rows // 16))
  assert results[1]["logged"] == -(-batches // 4)


def test_an_evaluation_of_a_few_batches_traces_no_batched_loop(tmp_path,
                                                               monkeypatch):
  calls = []
  repeat = TracedModel.repeat
  monkeypatch.setattr(TracedModel, "repeat",
                      lambda self, n: calls.append(n) or repeat(self, n))
  results = {}
  for spl in (None, 1):
    est = models.estimator(tmp_path, model_fn=_counting_fn,
                           engine="function", steps_per_loop=spl)
    if spl is None:
      est.train(models.input_fn(), steps=3)
    results[spl] = est.evaluate(models.input_fn(num_epochs=1, rows=16 * 5))
  assert 5 < controller.SINGLE_BATCHES_FIRST and not calls
  assert results[None] == results[1]


def _slices(batches):
  """An input_fn of `batches` batches of 16 (tf.data knows how many)."""
  x, y = models.data(16 * batches)
  return lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)


@pytest.mark.parametrize("steps, input_fn, batched", [
    # More steps asked than SINGLE_BATCHES_FIRST, of an endless input.
    (controller.SINGLE_BATCHES_FIRST + 8, models.input_fn(), True),
    # Until the input ends, which tf.data knows holds more batches.
    (None, _slices(controller.SINGLE_BATCHES_FIRST + 8), True),
    # Many steps asked of an input known to hold few: one per call.
    (1000, _slices(5), False),
])
def test_an_evaluation_known_to_run_many_batches_batches_from_the_first(
    tmp_path, monkeypatch, steps, input_fn, batched):
  # Such a call pays for the batched loop anyway: its first
  # SINGLE_BATCHES_FIRST batches need not run one per call.
  single, looped = [], []
  step, repeat = TracedModel.step, TracedModel.repeat
  monkeypatch.setattr(TracedModel, "step",
                      lambda self, keys=(), n=1: single.append(n) or step(
                          self, keys, n))
  monkeypatch.setattr(TracedModel, "repeat",
                      lambda self, n: looped.append(n) or repeat(self, n))
  results = {}
  for spl in (None, 1):
    single.clear()
    est = models.estimator(tmp_path, model_fn=_counting_fn,
                           engine="function", steps_per_loop=spl)
    if spl is None:
      est.train(models.input_fn(), steps=3)
    results[spl] = est.evaluate(input_fn, steps=steps)
    if spl is None:
      # Each many-batch call's plan ends with one batch run alone (the one
      # a hook would observe).
      assert (len(single) < controller.SINGLE_BATCHES_FIRST // 4) == batched, (
          single)
      assert bool(looped) == batched
  assert results[None] == results[1]


def _step_by_fn(increment):
  """_linear_fn whose train_op moves global_step by `increment` per step."""

  def model_fn(features, labels, mode, params):
    del params
    logits = tf.compat.v1.layers.dense(features["x"], models.CLASSES)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    minimize = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    step = tf.compat.v1.train.get_global_step()
    with tf.control_dependencies([minimize]):  # After the step's input.
      train_op = tf.compat.v1.assign_add(step, increment).op
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  return model_fn


@pytest.mark.parametrize("increment", [0, 2])
def test_a_step_that_does_not_move_global_step_by_one_falls_back(
    tmp_path, monkeypatch, increment):
  # 0: the global-step guard counts the steps; 2: the cadences cannot count
  # steps as global steps. Either way: one step per call, the same results.
  x, y = models.data(rows=16 * 12)

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)

  # Checkpoints every 4: the step 2 -> 4 that stops the first call ends on
  # one (saved there, as after any step).
  auto, _ = _run(tmp_path / "auto", None, monkeypatch, input_fn=input_fn,
                 base_fn=_step_by_fn(increment), save_checkpoints_steps=4)
  single, _ = _run(tmp_path / "single", 1, monkeypatch, input_fn=input_fn,
                   base_fn=_step_by_fn(increment), save_checkpoints_steps=4)
  assert len(single["checkpoints"]) > 2
  _assert_same(auto, single)
