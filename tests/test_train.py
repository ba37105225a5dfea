"""Estimator.train: step semantics, model_dir layout, summaries, hooks."""

import logging
import os
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from tests import models

pytestmark = pytest.mark.usefixtures("engine")


def test_steps_add_to_restored_step(tmp_path):
  est = models.estimator(tmp_path)
  est.train(models.input_fn(), steps=6)
  assert est.get_variable_value("global_step") == 6
  est.train(models.input_fn(), steps=4)
  assert est.get_variable_value("global_step") == 10


def test_max_steps_is_absolute_and_skips_when_reached(tmp_path, caplog):
  est = models.estimator(tmp_path)
  est.train(models.input_fn(), max_steps=5)
  assert est.get_variable_value("global_step") == 5
  before = models.checkpoint_files(tmp_path)
  with caplog.at_level(logging.INFO):
    est.train(models.input_fn(), max_steps=5)
  assert "Skipping training since max_steps has already saved" in caplog.text
  assert models.checkpoint_files(tmp_path) == before
  est.train(models.input_fn(), max_steps=8)
  assert est.get_variable_value("global_step") == 8


def test_end_of_input_stops_training(tmp_path):
  est = models.estimator(tmp_path)
  est.train(models.input_fn(batch_size=32, num_epochs=1, rows=70), steps=100)
  assert est.get_variable_value("global_step") == 3  # 32 + 32 + 6 rows


def test_steps_and_max_steps_validated(tmp_path):
  est = models.estimator(tmp_path)
  with pytest.raises(ValueError, match="both steps and max_steps"):
    est.train(models.input_fn(), steps=1, max_steps=2)
  with pytest.raises(ValueError, match="steps > 0"):
    est.train(models.input_fn(), steps=0)
  assert models.checkpoint_files(tmp_path) == []


def test_model_dir_layout_and_checkpoint_cadence(tmp_path):
  est = models.estimator(tmp_path, save_checkpoints_steps=5,
                         keep_checkpoint_max=10)
  est.train(models.input_fn(), steps=12)
  files = set(os.listdir(tmp_path))
  for step in (0, 5, 10, 12):
    assert {f"model.ckpt-{step}.index", f"model.ckpt-{step}.meta",
            f"model.ckpt-{step}.data-00000-of-00001"} <= files
  assert "checkpoint" in files and "graph.pbtxt" in files
  assert any(f.startswith("events.out.tfevents.") for f in files)
  assert est.latest_checkpoint() == str(tmp_path / "model.ckpt-12")
  # The second call saves at its start step, then every 5 steps from there.
  est.train(models.input_fn(), steps=7)
  steps = sorted(int(f.split("-")[1].split(".")[0])
                 for f in os.listdir(tmp_path) if f.endswith(".index"))
  assert steps == [0, 5, 10, 12, 17, 19]


def test_keep_checkpoint_max(tmp_path):
  est = models.estimator(tmp_path, save_checkpoints_steps=2,
                         keep_checkpoint_max=2)
  est.train(models.input_fn(), steps=9)
  index_files = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
  assert index_files == ["model.ckpt-8.index", "model.ckpt-9.index"]


def test_summaries_hold_loss_step_rate_and_model_summaries(tmp_path):
  est = models.estimator(tmp_path, save_summary_steps=2,
                         log_step_count_steps=3)
  est.train(models.input_fn(), steps=9)
  tags = models.events(str(tmp_path))
  assert "loss" in tags and "my_summary" in tags
  assert "global_step/sec" in tags
  loss_steps = [step for step, _ in tags["loss"]]
  assert loss_steps[:3] == [1, 3, 5]
  for (step, loss), (_, doubled) in zip(tags["loss"], tags["my_summary"]):
    assert doubled == pytest.approx(2 * loss, rel=1e-5), step


def test_loss_log_lines(tmp_path, caplog, engine):
  est = models.estimator(tmp_path, log_step_count_steps=4)
  with caplog.at_level(logging.INFO):
    est.train(models.input_fn(), steps=9)
  lines = [r.getMessage() for r in caplog.records
           if r.getMessage().startswith("loss = ")]
  assert len(lines) == 3, lines  # steps 0, 4, 8
  # The function engine reads the step before the update; a TF1 session reads
  # it concurrently with the train_op (as the Estimator did), so 0 or 1.
  slack = [0] if engine == "function" else [0, 1]
  assert re.fullmatch(r"loss = [0-9.]+, step = (\d+)", lines[0]), lines[0]
  assert int(lines[0].rsplit(" ", 1)[1]) in slack
  step = int(re.search(r"step = (\d+) \(", lines[1]).group(1))
  assert step - 4 in slack
  assert lines[1].endswith(" sec)")


class _Recorder(tfe.SessionRunHook):
  """Records hook calls and the values it asked for."""

  def __init__(self, stop_at=None):
    self.calls, self.steps, self.stop_at = [], [], stop_at

  def begin(self):
    self.calls.append("begin")
    self._step = tf.compat.v1.train.get_global_step()

  def after_create_session(self, session, coord):
    self.calls.append("after_create_session")

  def before_run(self, run_context):
    return tfe.SessionRunArgs({"step": self._step})

  def after_run(self, run_context, run_values):
    self.steps.append(int(run_values.results["step"]))
    if self.stop_at is not None and len(self.steps) >= self.stop_at:
      run_context.request_stop()

  def end(self, session):
    self.calls.append("end")


def test_train_hooks_spec_hooks_and_request_stop(tmp_path):
  spec_hook, chief_hook = _Recorder(), _Recorder()

  def model_fn(features, labels, mode, params):
    spec = models.classifier_fn(features, labels, mode, params)
    return spec._replace(training_hooks=[spec_hook],
                         training_chief_hooks=[chief_hook])

  user_hook = _Recorder(stop_at=4)
  est = models.estimator(tmp_path, model_fn=model_fn)
  est.train(models.input_fn(), hooks=[user_hook], steps=50)
  assert est.get_variable_value("global_step") == 4
  for hook in (user_hook, spec_hook, chief_hook):
    assert hook.calls == ["begin", "after_create_session", "end"]
    assert len(hook.steps) == 4


class _Listener(tfe.CheckpointSaverListener):

  def __init__(self):
    self.events = []

  def begin(self):
    self.events.append("begin")

  def before_save(self, session, global_step_value):
    self.events.append(("before", int(global_step_value)))

  def after_save(self, session, global_step_value):
    self.events.append(("after", int(global_step_value)))

  def end(self, session, global_step_value):
    self.events.append(("end", int(global_step_value)))


def test_saving_listeners(tmp_path):
  listener = _Listener()
  est = models.estimator(tmp_path, save_checkpoints_steps=4)
  est.train(models.input_fn(), steps=6, saving_listeners=[listener])
  assert listener.events == ["begin", ("before", 0), ("after", 0),
                             ("before", 4), ("after", 4), ("before", 6),
                             ("after", 6), ("end", 6)]


def test_nan_loss_stops_with_nan_error(tmp_path):
  def model_fn(features, labels, mode):
    del labels
    weight = tf.compat.v1.get_variable("w", [], initializer=tf.ones_initializer())
    loss = weight * tf.reduce_mean(features["x"]) * np.nan
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  with pytest.raises(tfe.NanLossDuringTrainingError):
    est.train(models.input_fn(), steps=3)


def test_train_op_without_global_step_still_advances(tmp_path, caplog):
  def model_fn(features, labels, mode):
    logits = tf.compat.v1.layers.dense(features["x"], models.CLASSES)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss)  # bug
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  with caplog.at_level(logging.WARNING):
    est.train(models.input_fn(), steps=7)
  assert est.get_variable_value("global_step") == 7
  warnings = [r for r in caplog.records
              if "did not increase global_step" in r.getMessage()]
  assert len(warnings) == 1
  assert "global_step=tf.compat.v1.train.get_global_step()" in (
      warnings[0].getMessage())
  est.train(models.input_fn(), steps=3)
  assert est.get_variable_value("global_step") == 10


def test_model_fn_and_input_fn_argument_subsets(tmp_path):
  seen = {}

  def model_fn(features, labels):
    logits = tf.compat.v1.layers.dense(features, models.CLASSES)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, loss=loss, train_op=train_op)

  def input_fn(mode, params, config, input_context):
    seen.update(mode=mode, params=params, config=config, ctx=input_context)
    x, y = models.data()
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(8)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(input_fn, steps=2)
  assert seen["mode"] == tfe.ModeKeys.TRAIN
  assert seen["params"] == {}
  assert isinstance(seen["config"], tfe.RunConfig)
  assert seen["config"].model_dir == str(tmp_path)
  assert seen["ctx"] is None
  assert est.get_variable_value("global_step") == 2


def test_input_fn_may_return_tensors_tuple(tmp_path):
  def input_fn():
    x, y = models.data()
    return {"x": tf.constant(x[:8])}, tf.constant(y[:8])

  est = models.estimator(tmp_path)
  est.train(input_fn, steps=3)
  assert est.get_variable_value("global_step") == 3


def test_params_and_config_reach_model_fn(tmp_path):
  seen = {}

  def model_fn(features, labels, mode, params, config):
    seen.update(params=params, config=config)
    return models.classifier_fn(features, labels, mode, params)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path),
                      params={"hidden": 5})
  est.train(models.input_fn(), steps=1)
  assert seen["params"] == {"hidden": 5}
  assert seen["config"].model_dir == str(tmp_path)
  assert est.get_variable_value("dense/kernel").shape == (models.DIM, 5)
