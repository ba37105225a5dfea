"""Unseeded random ops of a model_fn draw the Estimator's values whatever
the input_fn requested before them (sweep finding G3).

Under a graph seed each unseeded random op gets the next op seed of its
graph; the Estimator built input_fn then model_fn in one graph, so an
input_fn's one-shot iterator or unseeded shuffle moved the model_fn's op
seeds (a Dropout mask, tf.random.uniform). Expected values: the real
Estimator (TF 2.15.1 + tensorflow-estimator 2.15.0) on this program.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

X = np.arange(8, dtype=np.float32).reshape(8, 1)
# The model_fn's tf.random.uniform([3]) at steps 1 and 2, tf_random_seed=7,
# after an input_fn that requested one op seed.
AFTER_ONE_REQUEST = [[0.460375, 0.928518, 0.345556],
                     [0.377156, 0.392504, 0.9031]]
# The same after a Keras layer whose v1 initializer requested one more (the
# Estimator made the variable in its graph; here it is made eagerly).
AFTER_TWO_REQUESTS = [[0.280009, 0.686867, 0.652605],
                      [0.072666, 0.689429, 0.967441]]


def one_shot_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, X)).batch(4)
  return tf.compat.v1.data.make_one_shot_iterator(dataset.repeat()).get_next()


def unseeded_shuffle_input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": X}, X)).shuffle(8).batch(
      4).repeat()


def _model_fn(noise, keras_layer_first=False):
  def model_fn(features, labels, mode):
    if keras_layer_first:
      tf.keras.layers.Dense(
          2, kernel_initializer=tf.compat.v1.truncated_normal_initializer())(
              features["x"])
    noise[:] = [tf.random.uniform([3])]
    w = tf.compat.v1.get_variable(
        "w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)
  return model_fn


class _Seen(tfe.SessionRunHook):

  def __init__(self, noise):
    self._noise = noise
    self.values = []

  def before_run(self, run_context):
    return tfe.SessionRunArgs(self._noise[0])

  def after_run(self, run_context, run_values):
    self.values.append(run_values.results.tolist())


def _assert_noise(input_fn, expected, model_dir, keras_layer_first=False):
  """The model_fn's seeded noise in train() (2 steps) and evaluate() (1)."""
  noise = []
  estimator = tfe.Estimator(_model_fn(noise, keras_layer_first),
                            str(model_dir),
                            config=tfe.RunConfig(tf_random_seed=7))
  seen = _Seen(noise)
  estimator.train(input_fn, steps=2, hooks=[seen])
  np.testing.assert_allclose(seen.values, expected, atol=1e-6)
  seen = _Seen(noise)
  estimator.evaluate(input_fn, steps=1, hooks=[seen])
  np.testing.assert_allclose(seen.values, expected[:1], atol=1e-6)


@pytest.mark.parametrize("engine_name", [None, "function", "graph"])
@pytest.mark.parametrize("input_fn", [one_shot_input_fn,
                                      unseeded_shuffle_input_fn])
@pytest.mark.parametrize("keras_layer_first", [False, True])
def test_model_fn_op_seeds_follow_the_input_fn_requests(
    engine_name, input_fn, keras_layer_first, tmp_path, monkeypatch):
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  if engine_name:
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", engine_name)
  expected = AFTER_TWO_REQUESTS if keras_layer_first else AFTER_ONE_REQUEST
  _assert_noise(input_fn, expected, tmp_path, keras_layer_first)


# After an input_fn that requested no op seed (the real Estimator, same
# program, numpy_input_fn(shuffle=False): its FIFO queue requested none).
AFTER_NO_REQUEST = [[0.753728, 0.077938, 0.458809],
                    [0.791504, 0.510117, 0.541664]]


@pytest.mark.parametrize("engine_name", [None, "function", "graph"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_numpy_input_fn_requests_the_op_seeds_of_its_queue(
    engine_name, shuffle, tmp_path, monkeypatch):
  # Finding G10 (seeds 43, 57: Dropout after pandas_input_fn): ours read the
  # seed with a request (eagerly) or made a one-shot iterator (in a graph),
  # one request; the Estimator's queue requested one only to shuffle.
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  if engine_name:
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", engine_name)
  input_fn = tfe.inputs.numpy_input_fn({"x": X}, X, batch_size=4,
                                       num_epochs=None, shuffle=shuffle)
  expected = AFTER_ONE_REQUEST if shuffle else AFTER_NO_REQUEST
  _assert_noise(input_fn, expected, tmp_path)
