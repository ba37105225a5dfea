"""tf.keras.estimator.model_to_estimator after install().

tf-keras's function imports tensorflow_estimator...keras_lib; ours answers.
The names below (checkpoint variables, metrics, prediction keys, the keras/
folder) are what TF 2.15 + tensorflow-estimator 2.15 wrote for the same
models (checked on the reference virtualenv); tests/golden_programs/
keras_model.py compares the numbers. Calls run on the graph engine (the
default engine moves them there).
"""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat
from estimator_compat.errors import NeedsGraphEngine

estimator_compat.install()

X = np.random.RandomState(0).normal(size=(64, 4)).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int64)
SAVER_NAMES = ["global_step", "h/bias", "h/kernel", "out/bias", "out/kernel",
               "training/SGD/decay", "training/SGD/learning_rate",
               "training/SGD/momentum"]
OBJECT_NAMES = [
    "_CHECKPOINTABLE_OBJECT_GRAPH",
    "estimator_global_step/.ATTRIBUTES/VARIABLE_VALUE",
    "layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
    "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
    "layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE",
    "layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE",
    "optimizer/decay/.ATTRIBUTES/VARIABLE_VALUE",
    "optimizer/learning_rate/.ATTRIBUTES/VARIABLE_VALUE",
    "optimizer/momentum/.ATTRIBUTES/VARIABLE_VALUE"]


@pytest.fixture(autouse=True)
def default_engine(monkeypatch):
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices((X, Y)).batch(16).repeat()


def _predict_input_fn():
  return tf.data.Dataset.from_tensor_slices(X[:8]).batch(4)


def _model(optimizer=None, activation="relu", compile_model=True):
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(8, activation=activation, input_shape=(4,),
                            name="h"),
      tf.keras.layers.Dense(2, name="out")])
  if compile_model:
    model.compile(
        optimizer=optimizer or tf.keras.optimizers.legacy.SGD(0.1),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy",
                 tf.keras.metrics.SparseCategoricalAccuracy(name="sca")])
  return model


def _train_eval_predict(estimator):
  estimator.train(_input_fn, steps=3)
  metrics = estimator.evaluate(_input_fn, steps=2)
  predictions = list(estimator.predict(_predict_input_fn))
  return metrics, predictions


@pytest.mark.parametrize("fmt, optimizer, names", [
    ("saver", "legacy", SAVER_NAMES),
    ("checkpoint", "legacy", OBJECT_NAMES),
    (None, "v2", OBJECT_NAMES),  # converted to the legacy SGD, as TF 2.15
])
def test_names_are_tf215s(tmp_path, fmt, optimizer, names):
  opt = (tf.keras.optimizers.legacy.SGD(0.1) if optimizer == "legacy" else
         tf.keras.optimizers.SGD(0.1))
  est = tf.keras.estimator.model_to_estimator(
      keras_model=_model(opt), model_dir=str(tmp_path), checkpoint_format=fmt)
  metrics, predictions = _train_eval_predict(est)
  assert sorted(est.get_variable_names()) == names
  step_name = "global_step" if fmt == "saver" else names[1]
  assert est.get_variable_value(step_name) == 3
  assert sorted(metrics) == ["accuracy", "global_step", "loss", "sca"]
  assert 0.0 <= metrics["accuracy"] <= 1.0
  assert [sorted(p) for p in predictions] == [["out"]] * 8
  keras_dir = sorted(os.listdir(tmp_path / "keras"))
  assert keras_dir[:3] == ["checkpoint", "keras_model.ckpt.data-00000-of-00001",
                           "keras_model.ckpt.index"]


def test_starts_from_the_models_weights(tmp_path):
  model = _model()
  kernel = model.get_layer("h").get_weights()[0]
  est = tf.keras.estimator.model_to_estimator(keras_model=model,
                                              model_dir=str(tmp_path),
                                              checkpoint_format="saver")
  predictions = list(est.predict(_predict_input_fn))  # no training
  hidden = np.maximum(X[:8] @ kernel, 0.0)
  out_kernel, out_bias = model.get_layer("out").get_weights()
  # atol: the model's weights are unseeded, and an output near 0 can miss a
  # relative tolerance by float32 rounding alone (7.314e-05 vs 7.312e-05).
  np.testing.assert_allclose([p["out"] for p in predictions],
                             hidden @ out_kernel + out_bias, rtol=1e-5,
                             atol=1e-6)


class Doubled(tf.keras.layers.Layer):
  """A custom layer: loading and cloning need custom_objects."""

  def call(self, inputs):
    return 2.0 * inputs


def test_v1_function_and_keras_model_path_with_custom_objects(tmp_path):
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(8, activation="relu", input_shape=(4,), name="h"),
      Doubled(name="doubled"), tf.keras.layers.Dense(2, name="out")])
  model.compile(optimizer=tf.keras.optimizers.legacy.SGD(0.1),
                loss=tf.keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True))
  path = str(tmp_path / "model.h5")
  model.save(path)
  est = tf.compat.v1.keras.estimator.model_to_estimator(
      keras_model_path=path, custom_objects={"Doubled": Doubled},
      model_dir=str(tmp_path / "est"))
  metrics, predictions = _train_eval_predict(est)
  assert metrics["global_step"] == 3
  assert "h/kernel" in est.get_variable_names()  # the v1 default: 'saver'
  assert len(predictions) == 8


def test_export_serves_the_model_outputs(tmp_path):
  est = tf.keras.estimator.model_to_estimator(keras_model=_model(),
                                              model_dir=str(tmp_path / "m"))
  est.train(_input_fn, steps=2)

  def receiver():
    return estimator_compat.export.build_raw_serving_input_receiver_fn(
        {"h_input": tf.compat.v1.placeholder(tf.float32, [None, 4])})()

  path = est.export_saved_model(str(tmp_path / "export"), receiver)
  served = tf.saved_model.load(path.decode()).signatures["serving_default"](
      h_input=tf.constant(X[:3]))
  predicted = [p["out"] for p in est.predict(_predict_input_fn)][:3]
  np.testing.assert_allclose(served["out"].numpy(), predicted, rtol=1e-5)


@pytest.mark.parametrize("fmt", ["saver", "checkpoint"])
def test_export_before_training_uses_the_keras_checkpoint(tmp_path, fmt):
  # As the Estimator: no checkpoint in model_dir, so the warm-start one
  # (model_dir/keras) is exported: the converted model serves as is.
  model = _model()
  expected = model.predict(X[:3])  # the model is not usable once converted
  est = tf.keras.estimator.model_to_estimator(
      keras_model=model, model_dir=str(tmp_path / "m"), checkpoint_format=fmt)

  def receiver():
    return estimator_compat.export.build_raw_serving_input_receiver_fn(
        {"h_input": tf.compat.v1.placeholder(tf.float32, [None, 4])})()

  path = est.export_saved_model(str(tmp_path / "export"), receiver)
  served = tf.saved_model.load(path.decode()).signatures["serving_default"](
      h_input=tf.constant(X[:3]))
  np.testing.assert_allclose(served["out"].numpy(), expected, rtol=1e-5)


def test_explicit_function_engine_names_the_graph_engine(tmp_path,
                                                         monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  est = tf.keras.estimator.model_to_estimator(keras_model=_model(),
                                              model_dir=str(tmp_path))
  with pytest.raises(NeedsGraphEngine, match="engine='graph'"):
    est.train(_input_fn, steps=1)
  assert not glob.glob(str(tmp_path / "model.ckpt-*"))


@pytest.mark.parametrize("kwargs, match", [
    (dict(), "Either `keras_model` or `keras_model_path`"),
    (dict(keras_model=True, keras_model_path="x.h5"), "not both"),
    (dict(keras_model="uncompiled"), "has not been compiled"),
    (dict(keras_model="compiled", checkpoint_format="bad"),
     "Checkpoint format must be one of"),
    (dict(keras_model_path="gs://bucket/model.h5"), "Google Cloud Storage"),
])
def test_bad_arguments(tmp_path, kwargs, match):
  if kwargs.get("keras_model") in ("uncompiled", "compiled", True):
    kwargs["keras_model"] = _model(
        compile_model=kwargs["keras_model"] != "uncompiled")
  with pytest.raises(ValueError, match=match):
    tf.keras.estimator.model_to_estimator(model_dir=str(tmp_path), **kwargs)


def test_subclassed_model_needs_the_saver_format(tmp_path):
  class Net(tf.keras.Model):

    def __init__(self):
      super().__init__()
      self.dense = tf.keras.layers.Dense(2)

    def call(self, inputs):
      return self.dense(inputs)

    def get_config(self):
      return {}

  model = Net()
  model.compile(optimizer=tf.keras.optimizers.legacy.SGD(0.1), loss="mse")
  with pytest.raises(ValueError, match="checkpoint_format='saver'"):
    tf.keras.estimator.model_to_estimator(keras_model=model,
                                          model_dir=str(tmp_path))
