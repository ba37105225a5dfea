"""model_to_estimator's sample weights, metric_names_map and export_outputs.

The numbers and messages are what TF 2.15 + tensorflow-estimator 2.15 gave
for the same models and inputs (run on the reference virtualenv, 2026-12-02);
the model's weights are set by hand, so both sides start from the same
values. Calls run on the graph engine (the default engine moves them there).
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat
from estimator_compat.export import PredictOutput
from estimator_compat.keras import keras_model_estimator_fn as keras_fn

estimator_compat.install()

X = np.random.RandomState(0).normal(size=(8, 4)).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int64)
W = np.linspace(0, 1, 8).astype(np.float32)


@pytest.fixture(autouse=True)
def default_engine(monkeypatch):
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)


def _model(two_outputs=False, metrics=None):
  inputs = tf.keras.Input((4,), name="x")
  outputs = [tf.keras.layers.Dense(2, name="a")(inputs)]
  if two_outputs:
    outputs.append(tf.keras.layers.Dense(2, name="b")(inputs))
  model = tf.keras.Model(inputs, outputs)
  model.set_weights([np.arange(w.size, dtype=np.float32).reshape(w.shape) / 10
                     for w in model.get_weights()])
  model.compile(
      optimizer=tf.keras.optimizers.legacy.SGD(0.1),
      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=metrics)
  return model


def _evaluate(tmp_path, model, weights, labels, **kwargs):
  def input_fn():
    return tf.data.Dataset.from_tensors(
        ({"features": X, "sample_weights": weights}, labels))
  estimator = tf.keras.estimator.model_to_estimator(
      model, model_dir=str(tmp_path), **kwargs)
  return estimator.evaluate(input_fn, steps=1)


@pytest.mark.parametrize("two_outputs, weights, labels, loss", [
    (False, W, Y, 0.300121),
    (True, {"a": W}, {"a": Y, "b": Y}, 1.194776),  # b unweighted
])
def test_sample_weights_weigh_the_loss(tmp_path, two_outputs, weights,
                                       labels, loss):
  metrics = _evaluate(tmp_path, _model(two_outputs), weights, labels)
  assert metrics["loss"] == pytest.approx(loss, abs=1e-5)


@pytest.mark.parametrize("weights, error, message", [
    (W, TypeError, "The model has multiple outputs, so `sample_weights` "
     "should be either a list or a dict. Provided `sample_weights` type not "
     "understood: Tensor("),
    ({"c": W}, ValueError, "Unknown entries in sample_weights dictionary: "
     "['c']. Only expected following keys: ['a', 'b']"),
])
def test_sample_weights_that_fit_no_output(tmp_path, weights, error, message):
  with pytest.raises(error) as raised:
    _evaluate(tmp_path, _model(True), weights, {"a": Y, "b": Y})
  assert str(raised.value).startswith(message)


def test_metric_names_map(tmp_path):
  metrics = ["accuracy",
             tf.keras.metrics.SparseCategoricalAccuracy(name="sca")]
  found = _evaluate(tmp_path / "renamed", _model(metrics=metrics), W, Y,
                    metric_names_map={"accuracy": "acc", "sca": "s"})
  assert sorted(found) == ["acc", "global_step", "loss", "s"]
  with pytest.raises(ValueError, match=r"^Invalid `metric_names_map`. The "
                     r"following keras model metric names:\"\['sca'\]\" do "
                     r"not exist in the `metric_names_map` dictionary$"):
    _evaluate(tmp_path / "short", _model(metrics=metrics), W, Y,
              metric_names_map={"accuracy": "acc"})
  with pytest.raises(ValueError, match=r"^Invalid `metric_names_map`. There "
                     r"are unexpected keys in the `metric_names_map` "
                     r"dictionary. Expected keys: \[.*\], Received: "
                     r"\['zz'\]$"):
    _evaluate(tmp_path / "long", _model(metrics=metrics), W, Y,
              metric_names_map={"accuracy": "a", "sca": "s", "zz": "z"})


def test_per_output_weights():
  assert keras_fn.per_output_weights(None, ["a", "b"]) == [None, None]
  assert keras_fn.per_output_weights([], ["a"]) == [None]
  assert keras_fn.per_output_weights([W], ["a"]) == [W]
  assert keras_fn.per_output_weights({"a": W}, ["a"]) == [W]
  assert keras_fn.per_output_weights(W, ["a"]) == [W]
  assert keras_fn.per_output_weights((W, None), ["a", "b"]) == [W, None]
  assert keras_fn.per_output_weights({"b": W}, ["a", "b"]) == [None, W]
  with pytest.raises(ValueError, match="a list of 1 elements, but the model "
                     "has 2 outputs"):
    keras_fn.per_output_weights([W], ["a", "b"])


def test_dict_inputs_and_labels_name_the_missing_key():
  model = _model()
  with pytest.raises(KeyError) as raised:
    keras_fn.keras_inputs(model, {"y": X}, None)
  # The message keeps its newlines and ends with the fix.
  assert str(raised.value) == (
      "The dictionary passed into features does not cover requested keys "
      "defined in the keras model.\n\tExpected keys: {'x'}\n\tfeatures "
      "keys: {'y'}\n\tMissed keys: {'x'}\nFix: name the input_fn's "
      "dictionary entries after the model's Input layers (inputs) and "
      "outputs (labels).")
  inputs, labels, weights = keras_fn.keras_inputs(
      model, {"features": {"x": X}, "sample_weights": W}, [Y])
  assert [t.dtype for t in inputs + labels] == [tf.float32, tf.int64]
  assert weights is W


def test_export_outputs_by_output_name():
  model = _model(two_outputs=True)
  predictions = {"a": tf.constant([[1.0]]), "b": tf.constant([[2.0]])}
  outputs = keras_fn._export_outputs(model, predictions, {"b": PredictOutput})  # pylint: disable=protected-access
  assert sorted(outputs) == ["b", "serving_default"]
  assert outputs["b"].outputs == {"output": predictions["b"]}
  with pytest.raises(KeyError, match="export_outputs names outputs the "
                     "keras model does not have"):
    keras_fn._export_outputs(model, predictions, {"c": PredictOutput})  # pylint: disable=protected-access
