"""Estimator.evaluate and Estimator.predict."""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from tests import models

pytestmark = pytest.mark.usefixtures("engine")


@pytest.fixture(name="trained")
def _trained(tmp_path):
  est = models.estimator(tmp_path, save_checkpoints_steps=5)
  est.train(models.input_fn(), steps=10)
  return est


def _numpy_forward(est, x):
  def value(name):
    return est.get_variable_value(name)
  hidden = np.maximum(x @ value("dense/kernel") + value("dense/bias"), 0)
  logits = hidden @ value("dense_1/kernel") + value("dense_1/bias")
  return logits


def _xent(logits, labels):
  logits = logits - logits.max(axis=1, keepdims=True)
  log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
  return -log_probs[np.arange(len(labels)), labels]


def test_evaluate_returns_metrics_mean_batch_loss_and_step(trained):
  x, y = models.data(40)
  result = trained.evaluate(models.input_fn(batch_size=16, num_epochs=1,
                                            rows=40))
  assert sorted(result) == ["accuracy", "global_step", "loss"]
  assert result["global_step"] == 10
  logits = _numpy_forward(trained, x)
  batches = [slice(0, 16), slice(16, 32), slice(32, 40)]
  batch_losses = [_xent(logits[b], y[b]).mean() for b in batches]
  assert result["loss"] == pytest.approx(np.mean(batch_losses), rel=1e-5)
  assert result["loss"] != pytest.approx(_xent(logits, y).mean(), rel=1e-4)
  assert result["accuracy"] == pytest.approx(
      np.mean(np.argmax(logits, 1) == y), rel=1e-6)


def test_evaluate_writes_eval_dirs(trained):
  trained.evaluate(models.input_fn(num_epochs=1))
  trained.evaluate(models.input_fn(num_epochs=1), name="holdout")
  assert trained.eval_dir() == str(trained.model_dir) + "/eval"
  for folder in (trained.eval_dir(), trained.eval_dir("holdout")):
    tags = models.events(folder)
    assert sorted(tags) == ["accuracy", "loss"]
    assert tags["loss"][0][0] == 10


def test_evaluate_steps_and_checkpoint_path(trained):
  seen = []

  class Counter(tfe.SessionRunHook):

    def after_run(self, run_context, run_values):
      seen.append(1)

  result = trained.evaluate(models.input_fn(), steps=3, hooks=[Counter()],
                            checkpoint_path=str(trained.model_dir) +
                            "/model.ckpt-5")
  assert len(seen) == 3
  assert result["global_step"] == 5


def test_evaluate_without_checkpoint_initializes(tmp_path):
  est = models.estimator(tmp_path)
  result = est.evaluate(models.input_fn(num_epochs=1))
  assert result["global_step"] == 0
  assert np.isfinite(result["loss"])


def test_evaluation_and_prediction_hooks_from_spec(tmp_path):
  calls = []

  class Hook(tfe.SessionRunHook):

    def __init__(self, tag):
      self._tag = tag

    def end(self, session):
      calls.append(self._tag)

  def model_fn(features, labels, mode, params):
    spec = models.classifier_fn(features, labels, mode, params)
    return spec._replace(evaluation_hooks=[Hook("eval")],
                         prediction_hooks=[Hook("predict")])

  est = models.estimator(tmp_path, model_fn=model_fn)
  est.train(models.input_fn(), steps=2)
  est.evaluate(models.input_fn(num_epochs=1))
  list(est.predict(models.input_fn(num_epochs=1, labels=False)))
  assert calls == ["eval", "predict"]


def test_predict_single_examples_keys_and_batches(trained):
  x, _ = models.data(10)
  predictions = list(trained.predict(models.input_fn(
      batch_size=4, num_epochs=1, rows=10, labels=False)))
  assert len(predictions) == 10
  assert sorted(predictions[0]) == ["class", "probabilities"]
  logits = _numpy_forward(trained, x)
  np.testing.assert_array_equal([p["class"] for p in predictions],
                                np.argmax(logits, 1))
  only = list(trained.predict(models.input_fn(num_epochs=1, rows=10,
                                              labels=False),
                              predict_keys=["class"]))
  assert sorted(only[0]) == ["class"]
  batches = list(trained.predict(models.input_fn(batch_size=4, num_epochs=1,
                                                 rows=10, labels=False),
                                 yield_single_examples=False))
  assert [len(b["class"]) for b in batches] == [4, 4, 2]


def test_predict_ignores_labels_and_accepts_tensor_predictions(tmp_path):
  def model_fn(features, labels, mode):
    logits = tf.compat.v1.layers.dense(features["x"], 2)
    if mode == tfe.ModeKeys.PREDICT:
      assert labels is None
      return tfe.EstimatorSpec(mode, predictions=logits)
    loss = tf.reduce_mean(tf.square(logits - tf.cast(labels[:, None],
                                                     tf.float32)))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(models.input_fn(), steps=1)
  rows = list(est.predict(models.input_fn(num_epochs=1, rows=5)))
  assert len(rows) == 5 and rows[0].shape == (2,)


def test_predict_errors(trained, tmp_path):
  with pytest.raises(ValueError, match="^Expected to run at least one output "
                     "from .*provided \\['nope'\\].*Fix"):
    list(trained.predict(models.input_fn(num_epochs=1, labels=False),
                         predict_keys=["nope"]))
  empty = tmp_path / "empty"
  empty.mkdir()
  fresh = models.estimator(tmp_path / "fresh")
  with pytest.raises(ValueError, match="^Could not find trained model"):
    next(fresh.predict(models.input_fn(num_epochs=1, labels=False),
                       checkpoint_path=str(empty)))


def test_variable_access(trained):
  names = trained.get_variable_names()
  assert names == ["dense/bias", "dense/kernel", "dense_1/bias",
                   "dense_1/kernel", "global_step"]
  assert trained.get_variable_value("dense/kernel").shape == (models.DIM, 8)


def test_evaluate_orders_metrics_by_name_then_global_step(tmp_path):
  # TF 2.15's Estimator returned ['Alpha', 'beta', 'loss', 'm', 'zeta',
  # 'global_step'] for these metrics: sorted by name, `loss` among them.
  def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [3, 1],
                                  initializer=tf.compat.v1.ones_initializer())
    pred = tf.matmul(features["x"], w)
    loss = tf.reduce_mean(tf.square(pred - labels))
    mean = tf.compat.v1.metrics.mean
    return tfe.EstimatorSpec(
        mode, loss=loss,
        eval_metric_ops={"zeta": mean(pred), "Alpha": mean(labels),
                         "beta": mean(pred * 2), "m": mean(pred * 3)})

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        ({"x": np.ones((4, 3), np.float32)}, np.ones((4, 1), np.float32))
    ).batch(2)

  result = tfe.Estimator(model_fn, str(tmp_path)).evaluate(input_fn)
  assert list(result) == ["Alpha", "beta", "loss", "m", "zeta", "global_step"]
  assert result["zeta"] == pytest.approx(3.0)
  assert result["m"] == pytest.approx(9.0)
