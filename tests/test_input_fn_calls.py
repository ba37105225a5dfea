"""input_fn is called once per train/evaluate/predict, as by the Estimator.

An input_fn with side effects (a shared Python iterator, a call counter)
otherwise loses batches or feeds others than the Estimator fed.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

X = np.arange(20, dtype=np.float32).reshape(20, 1)
Y = 2. * X



def model_fn(features, labels, mode):
  x = features["x"]
  w = tf.compat.v1.get_variable("w", [1, 1],
                                initializer=tf.compat.v1.zeros_initializer())
  pred = tf.matmul(x, w)
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions={"p": pred})
  loss = tf.reduce_mean(tf.square(pred - labels))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
      loss, tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def dataset_input():
  return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(5)


def constant_input():
  return {"x": tf.constant(X[:5])}, tf.constant(Y[:5])


def one_shot_input():
  return tf.compat.v1.data.make_one_shot_iterator(dataset_input()).get_next()


_NUMPY = tfe.inputs.numpy_input_fn({"x": X}, Y, batch_size=5, shuffle=False,
                                   num_epochs=1)


def numpy_input():
  return _NUMPY()


@pytest.mark.parametrize("make_input", [dataset_input, constant_input,
                                        one_shot_input, numpy_input])
def test_input_fn_called_once_per_call(engine_name, make_input, tmp_path):
  calls = []

  def input_fn():
    calls.append(1)
    return make_input()

  estimator = tfe.Estimator(model_fn, str(tmp_path))
  estimator.train(input_fn, steps=3)
  assert len(calls) == 1
  estimator.evaluate(input_fn, steps=2)
  assert len(calls) == 2
  next(estimator.predict(input_fn))
  assert len(calls) == 3
  del engine_name


def test_shared_python_iterator_feeds_the_estimators_batches(engine_name,
                                                             tmp_path):
  batches = iter([(np.full((4, 1), i + 1., np.float32),
                   np.full((4, 1), 3. * (i + 1), np.float32))
                  for i in range(6)])
  pulled = []

  def input_fn():
    x, y = next(batches)
    pulled.append(float(x[0, 0]))
    return {"x": tf.constant(x)}, tf.constant(y)

  estimator = tfe.Estimator(model_fn, str(tmp_path))
  estimator.train(input_fn, steps=3)
  estimator.train(input_fn, steps=2)
  assert pulled == [1., 2.]
  # TF 2.15's Estimator, the same program (3 steps on batch 1, 2 on batch 2).
  np.testing.assert_allclose(estimator.get_variable_value("w"),
                             [[0.6101252436637878]], rtol=1e-6)
  del engine_name
