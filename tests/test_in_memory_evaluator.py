"""InMemoryEvaluatorHook on both engines: steps, values, refusals."""

import json

import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.in_training import early_stopping
from tests import models


def _range_input_fn():
  return tf.compat.v1.data.Dataset.range(10)


def _counting_model_fn(features, labels, mode):
  """TRAIN adds 1 to the step and sets w = step + 2; EVAL averages w."""
  del labels
  step = tf.compat.v1.train.get_global_step()
  w = tf.compat.v1.get_variable("w", shape=[], dtype=tf.int64,
                                initializer=tf.compat.v1.zeros_initializer())
  if mode == tfe.ModeKeys.TRAIN:
    with tf.control_dependencies([features]):
      increment = tf.compat.v1.assign_add(step, 1)
    with tf.control_dependencies([increment]):
      train_op = w.assign(step + 2)
    return tfe.EstimatorSpec(mode, loss=tf.constant(3.), train_op=train_op)
  mean_w = tf.keras.metrics.Mean()
  mean_w.update_state(w)
  mean_x = tf.keras.metrics.Mean()
  mean_x.update_state(features)
  return tfe.EstimatorSpec(mode, loss=tf.constant(5.),
                           eval_metric_ops={"mean_w": mean_w,
                                            "mean_x": mean_x})


def test_evaluates_at_start_every_n_and_at_the_end(tmp_path, engine):
  estimator = tfe.Estimator(_counting_model_fn, model_dir=str(tmp_path))
  hook = tfe.experimental.InMemoryEvaluatorHook(estimator, _range_input_fn,
                                                every_n_iter=4)
  estimator.train(_range_input_fn, hooks=[hook])
  history = early_stopping.read_eval_metrics(estimator.eval_dir())
  assert list(history) == [0, 4, 8, 10]
  # The current values, not the last checkpoint's: w = step + 2 after a step.
  assert [history[s]["mean_w"] for s in history] == [0, 6, 10, 12]
  assert all(history[s]["mean_x"] == 4.5 for s in history)


def test_named_evaluation_goes_to_its_own_dir(tmp_path, engine):
  estimator = models.estimator(tmp_path / "model")
  hook = tfe.experimental.InMemoryEvaluatorHook(
      estimator, models.input_fn(batch_size=32, num_epochs=1),
      name="in-memory", every_n_iter=5)
  estimator.train(models.input_fn(), hooks=[hook], steps=12)
  history = early_stopping.read_eval_metrics(estimator.eval_dir("in-memory"))
  assert list(history) == [0, 5, 10, 12]
  # A numpy_input_fn's data is read again for every evaluation.
  assert all(m["accuracy"] > 0 for m in history.values())
  assert not tf.io.gfile.exists(estimator.eval_dir())
  final = estimator.evaluate(models.input_fn(batch_size=32, num_epochs=1))
  assert history[12]["accuracy"] == pytest.approx(final["accuracy"])
  assert history[12]["loss"] == pytest.approx(final["loss"], rel=1e-5)


def test_refuses_bad_settings(tmp_path, monkeypatch):
  estimator = models.estimator(tmp_path / "a")
  for every in (0, -1, None):
    with pytest.raises(ValueError, match="invalid every_n_iter"):
      tfe.experimental.InMemoryEvaluatorHook(estimator, _range_input_fn,
                                             every_n_iter=every)
  monkeypatch.setenv("TF_CONFIG", json.dumps({
      "cluster": {"chief": ["h:0"], "ps": ["h:1"]},
      "task": {"type": "chief", "index": 0}}))
  clustered = models.estimator(tmp_path / "b")
  with pytest.raises(ValueError, match="supports only single machine"):
    tfe.experimental.InMemoryEvaluatorHook(clustered, _range_input_fn)


def _scaffold_model_fn(scaffold_kwargs):

  def model_fn(features, labels, mode):
    del features, labels
    tf.compat.v1.get_variable("v", shape=[])
    scaffold = tf.compat.v1.train.Scaffold(**scaffold_kwargs())
    return tfe.EstimatorSpec(mode, loss=tf.constant(3.), scaffold=scaffold,
                             train_op=tf.compat.v1.assign_add(
                                 tf.compat.v1.train.get_global_step(), 1))

  return model_fn


@pytest.mark.parametrize("kwargs,message", [
    (lambda: {"saver": tf.compat.v1.train.Saver()}, "custom saver"),
    (lambda: {"init_fn": lambda scaffold, session: None}, "custom init_fn")])
def test_refuses_custom_saver_or_init_fn_at_begin(tmp_path, kwargs, message):
  estimator = tfe.Estimator(_scaffold_model_fn(kwargs), model_dir=str(tmp_path))
  hook = tfe.experimental.InMemoryEvaluatorHook(estimator, _range_input_fn)
  with pytest.raises(ValueError, match=f"does not support {message}"):
    hook.begin()
