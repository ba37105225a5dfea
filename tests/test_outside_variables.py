"""Variables a model_fn uses but did not make (a tf-keras model built outside).

TF 2.15.1 + tensorflow-estimator 2.15.0 (run by hand) called model_fn in a
new graph each time, so a tf-keras model built at module level with an input
shape, or a variable made eagerly, failed every call with `RuntimeError:
Attempting to capture an EagerTensor without building a function.` The
function engine traced it into a TF2 function and trained it, but no
checkpoint held the model's weights: the next process started them afresh.
It is now refused, with TF's error first, before any file is written.
"""

import os
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.engines.function import outside_variables
from tests import models

_X = (np.arange(24, dtype=np.float32).reshape(8, 3) / 24) ** 2
_Y = np.array([[1.], [0.], [1.], [0.], [1], [1], [0], [0]], np.float32)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


def _model_fn_using(weights):
  """A model_fn whose logits come from `weights(features)`."""

  def model_fn(features, labels, mode):
    # A variable of its own (a bias), so that the optimizer has one.
    logits = weights(features["x"]) + tf.compat.v1.get_variable("bias", [1])
    if mode == tfe.ModeKeys.PREDICT:
      return tfe.EstimatorSpec(mode, predictions={"logits": logits})
    return models.binary_sgd_spec(mode, labels, logits)

  return model_fn


def _outside_model():
  return tf.keras.Sequential([
      tf.keras.layers.Dense(1, input_shape=(3,),
                            kernel_initializer=tf.keras.initializers.Ones())])


@pytest.mark.parametrize("engine", [None, "function"])
def test_a_keras_model_built_outside_is_refused_before_any_file(
    engine, tmp_path):
  model = _outside_model()
  config = tfe.RunConfig(engine=engine) if engine else None
  estimator = tfe.Estimator(_model_fn_using(model), str(tmp_path / "m"),
                            config=config)
  with pytest.raises(RuntimeError) as raised:
    estimator.train(_input_fn, steps=2)
  message = str(raised.value)
  assert message.startswith(outside_variables.TF_ERROR)
  assert re.search(r"read by 'sequential(_\d+)?/dense(_\d+)?/", message)  # where
  assert "Fix: build the model (or make the variable) inside model_fn" in (
      message)
  model_dir = tmp_path / "m"
  assert not model_dir.exists() or not [
      name for name in os.listdir(model_dir) if name.startswith("model.ckpt")]
  # The model's weights are as they were: nothing trained them.
  np.testing.assert_array_equal(model.get_weights()[0], np.ones((3, 1)))


def test_an_eager_variable_is_refused_in_every_mode(tmp_path):
  weights = tf.Variable(np.ones((3, 1), np.float32))
  estimator = tfe.Estimator(
      _model_fn_using(lambda x: tf.matmul(x, weights)), str(tmp_path))
  for call in (lambda: estimator.evaluate(_input_fn, steps=1),
               lambda: list(estimator.predict(
                   lambda: tf.data.Dataset.from_tensor_slices(
                       {"x": _X}).batch(4)))):
    with pytest.raises(RuntimeError, match="Attempting to capture an "
                       "EagerTensor without building a function"):
      call()


def test_the_same_model_built_inside_trains_and_is_saved(tmp_path):
  estimator = tfe.Estimator(
      _model_fn_using(lambda x: _outside_model()(x)), str(tmp_path))
  estimator.train(_input_fn, steps=2)
  assert "dense/kernel" in estimator.get_variable_names()
  assert not np.array_equal(estimator.get_variable_value("dense/kernel"),
                            np.ones((3, 1)))


def test_random_ops_and_eager_constants_still_run(tmp_path):
  # The random streams' counters are the engine's own eager variables; a
  # constant made eagerly holds no state (listed: eager-constant-in-model-fn).
  scale = tf.constant(0.5)

  def weights(x):
    kernel = tf.compat.v1.get_variable("kernel", [3, 1])
    noisy = tf.compat.v1.nn.dropout(x, rate=0.5, seed=3) * scale
    return tf.matmul(noisy + tf.random.uniform([1, 3], seed=4), kernel)

  estimator = tfe.Estimator(_model_fn_using(weights), str(tmp_path),
                            config=tfe.RunConfig(engine="function",
                                                 tf_random_seed=1))
  estimator.train(_input_fn, steps=2)
  assert estimator.get_variable_value("global_step") == 2


def test_a_layer_built_by_an_earlier_call_gets_tf1s_other_graph_error(
    tmp_path):
  # TF 2.15 trained the first call (the layer was built in its graph) and
  # raised ValueError "... must be from the same graph as ..." in the next.
  layer = tf.keras.layers.Dense(1, kernel_initializer="ones", name="late")
  estimator = tfe.Estimator(_model_fn_using(layer), str(tmp_path))
  estimator.train(_input_fn, steps=2)
  assert "late/kernel" in estimator.get_variable_names()
  with pytest.raises(ValueError, match="must be from the same graph") as (
      raised):
    list(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": _X}).batch(4)))
  assert "Fix: build the model" in str(raised.value)
