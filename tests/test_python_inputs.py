"""An input_fn may return Python lists and numbers, as under the Estimator."""

import pytest
import tensorflow as tf

import estimator_compat as tfe


def _input_fn():
  return {"x": [[1.0], [2.0], [3.0], [4.0]]}, [[2.0], [4.0], [6.0], [8.0]]


def _model_fn(features, labels, mode):
  w = tf.compat.v1.get_variable(
      "w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
  pred = tf.matmul(features["x"], w)
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions={"p": pred})
  loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
  opt = tf.compat.v1.train.GradientDescentOptimizer(0.01)
  return tfe.EstimatorSpec(
      mode, loss=loss, predictions={"p": pred},
      train_op=opt.minimize(
          loss, global_step=tf.compat.v1.train.get_global_step()))


def test_lists_train_and_evaluate_as_the_estimator(tmp_path, engine):
  del engine
  est = tfe.Estimator(_model_fn, model_dir=str(tmp_path))
  est.train(_input_fn, steps=3)
  metrics = est.evaluate(_input_fn, steps=1)
  # The real Estimator (TF 2.15) on the same program.
  assert metrics["loss"] == pytest.approx(11.3144865, rel=1e-6)
  assert metrics["global_step"] == 3


def test_ints_and_floats_in_a_pair(tmp_path, engine):
  del engine

  def model_fn(features, labels, mode):
    assert tf.is_tensor(features["x"]) and tf.is_tensor(labels)
    return _model_fn({"x": tf.reshape(tf.cast(features["x"], tf.float32),
                                      [1, 1])},
                     tf.reshape(labels, [1, 1]), mode)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(lambda: ({"x": 3}, 6.0), steps=1)
  assert est.get_variable_value("global_step") == 1


def test_ragged_lists_name_the_fix(tmp_path, engine):
  del engine
  est = tfe.Estimator(_model_fn, model_dir=str(tmp_path))
  with pytest.raises((TypeError, ValueError), match="Fix"):
    est.train(lambda: ({"x": [[1.0], [2.0, 3.0]]}, [1.0, 2.0]), steps=1)
