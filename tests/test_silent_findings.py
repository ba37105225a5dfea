"""Findings of issue 23 that gave different results with no error.

Each test states what the real Estimator (TF 2.15.1 + tensorflow-estimator
2.15.0) did on the same program; the numbers were read there.
"""

import logging
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

_X = np.random.RandomState(0).normal(size=(40, 4)).astype(np.float32)
_Y = (_X[:, 0] > 0).astype(np.int32)


@pytest.fixture
def engine(engine_name):
  """The default engine (nothing set) and each forced engine (conftest)."""
  return engine_name


def _input_fn(epochs=None, batch=10):
  return lambda: tf.data.Dataset.from_tensor_slices((_X, _Y)).batch(
      batch).repeat(epochs)


def _linear_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features, 2)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _batch_norm_fn(features, labels, mode):
  """A tf.keras and a tf.compat.v1 batch norm; train_op after UPDATE_OPS."""
  training = mode == tfe.ModeKeys.TRAIN
  net = tf.compat.v1.layers.batch_normalization(features, training=training,
                                                name="v1_bn")
  net = tf.keras.layers.BatchNormalization(name="keras_bn")(
      net, training=training)
  net = tf.compat.v1.layers.batch_normalization(
      net, training=training, trainable=False, name="frozen_v1_bn")
  logits = tf.compat.v1.layers.dense(net, 2)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
  with tf.control_dependencies(update_ops):
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_only_v1_layers_put_updates_in_update_ops(engine, tmp_path):
  """TF 2.15: a tf.keras layer's updates are not in UPDATE_OPS, a v1's are.

  So with the train_op depending on UPDATE_OPS, the Keras layer's moving
  statistics stay at 0 and 1 and the v1 layer's train; a v1 layer with
  trainable=False leaves its updates out too.
  """
  est = tfe.Estimator(_batch_norm_fn, str(tmp_path),
                      config=tfe.RunConfig(tf_random_seed=1))
  est.train(_input_fn(), steps=3)
  for frozen in ("keras_bn", "frozen_v1_bn"):
    np.testing.assert_array_equal(
        est.get_variable_value(f"{frozen}/moving_mean"),
        np.zeros(4, np.float32))
    np.testing.assert_array_equal(
        est.get_variable_value(f"{frozen}/moving_variance"),
        np.ones(4, np.float32))
  # TF 2.15's values (the first layer's statistics depend on the data only).
  np.testing.assert_allclose(
      est.get_variable_value("v1_bn/moving_mean"),
      [0.00471628, 0.00467512, -0.0007282, 0.00715086], rtol=1e-4)
  np.testing.assert_allclose(
      est.get_variable_value("v1_bn/moving_variance"),
      [1.0100225, 0.99454886, 0.98556733, 0.9938698], rtol=1e-5)


class _RecordingExporter(tfe.Exporter):
  """Records (evaluated global step, is_the_final_export) of each call."""

  def __init__(self):
    self.calls = []

  @property
  def name(self):
    return "recording"

  def export(self, estimator, export_path, checkpoint_path, eval_result,
             is_the_final_export):
    del estimator, export_path, checkpoint_path
    self.calls.append((int(eval_result["global_step"]), is_the_final_export))


@pytest.mark.parametrize("max_steps, epochs, calls", [
    (10, 1, [(4, False)]),   # the input ended at step 4, before max_steps
    (None, 1, [(4, False)]),  # no max_steps: never final
    (4, 1, [(4, True)]),     # the input ended exactly at max_steps
])
def test_final_export_only_at_max_steps(engine, tmp_path, max_steps, epochs,
                                        calls):
  """TF 2.15: final when the evaluated step >= max_steps (these calls)."""
  exporter = _RecordingExporter()
  tfe.train_and_evaluate(
      tfe.Estimator(_linear_fn, str(tmp_path)),
      tfe.TrainSpec(_input_fn(epochs), max_steps=max_steps),
      tfe.EvalSpec(_input_fn(1, batch=20), exporters=[exporter]))
  assert exporter.calls == calls


class _CountRuns(tf.compat.v1.train.SessionRunHook):

  def __init__(self):
    self.runs = 0

  def after_run(self, run_context, run_values):
    del run_context, run_values
    self.runs += 1


def test_fractional_steps_stop_at_the_next_whole_step(engine, tmp_path):
  """TF 2.15 (StopAtStepHook: stop at global_step >= last_step): 12.5 steps
  trained 13, max_steps=20.0 reached 20, max_steps=21.5 stopped at 22,
  evaluate(steps=2.5) ran 3 batches; 0.0 was refused."""
  est = tfe.Estimator(_linear_fn, str(tmp_path))
  step = lambda: int(est.get_variable_value("global_step"))
  est.train(_input_fn(batch=4), steps=12.5)
  assert step() == 13
  est.train(_input_fn(batch=4), max_steps=20.0)
  assert step() == 20
  est.train(_input_fn(batch=4), max_steps=21.5)
  assert step() == 22
  counter = _CountRuns()
  est.evaluate(_input_fn(batch=4), steps=2.5, hooks=[counter])
  assert counter.runs == 3
  with pytest.raises(ValueError, match=r"Must specify steps > 0, given: 0\.0"):
    est.train(_input_fn(), steps=0.0)
  with pytest.raises(ValueError, match=r"Must specify steps > 0, given: 0\.0"):
    est.evaluate(_input_fn(), steps=0.0)


def test_fractional_max_steps_in_train_and_evaluate(engine, tmp_path):
  """TF 2.15: TrainSpec(max_steps=6.5) trained to 7, final export there."""
  exporter = _RecordingExporter()
  metrics, _ = tfe.train_and_evaluate(
      tfe.Estimator(_linear_fn, str(tmp_path)),
      tfe.TrainSpec(_input_fn(), max_steps=6.5),
      tfe.EvalSpec(_input_fn(1, batch=20), steps=1.5, exporters=[exporter]))
  assert metrics["global_step"] == 7
  assert exporter.calls == [(7, True)]


class _FinalLoss(logging.Handler):
  """The value of the "Loss for final step: X." line."""

  def __init__(self):
    super().__init__(logging.INFO)
    self.values = []

  def emit(self, record):
    match = re.match(r"Loss for final step: (\S+)\.$", record.getMessage())
    if match:
      self.values.append(float(match.group(1)))


def _zeros_fn(features, labels, mode):
  """Deterministic from the first step: the same losses on TF 2.15."""
  logits = tf.compat.v1.layers.dense(
      features, 2, kernel_initializer=tf.compat.v1.zeros_initializer())
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize("forced, steps_per_loop", [
    (None, None), ("graph", 1), ("function", 1), ("function", 7),
    ("function", None)])
def test_loss_for_final_step_when_input_ends_inside_a_call(
    tmp_path, monkeypatch, forced, steps_per_loop):
  """351 batches (1403 rows by 4; 351 = 50 * 7 + 1 ends inside a 7-step call,
  and automatic steps end inside an unobserved run after step 300): TF 2.15
  logged "Loss for final step: 0.027000332." (the 3-row last batch's)."""
  if forced is None:
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  else:
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", forced)
  x = np.random.RandomState(0).randn(1403, 4).astype(np.float32)
  y = (x[:, 0] > 0).astype(np.int32)
  est = tfe.Estimator(_zeros_fn, str(tmp_path), config=tfe.RunConfig(
      log_step_count_steps=100, save_summary_steps=100,
      steps_per_loop=steps_per_loop))
  handler = _FinalLoss()
  logger = logging.getLogger("tensorflow")
  level = logger.level
  logger.addHandler(handler)
  logger.setLevel(logging.INFO)
  try:
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(4))
  finally:
    logger.removeHandler(handler)
    logger.setLevel(level)
  assert int(est.get_variable_value("global_step")) == 351
  assert len(handler.values) == 1
  np.testing.assert_allclose(handler.values[0], 0.027000332, rtol=1e-5)
