"""A canned DNN with dropout and batch norm (canned/dnn_model.py).

The checkpoint's variables are the ones the real Estimator (TF 2.15) wrote
for the same DNNRegressor(hidden_units=[3], dropout=0.5, batch_norm=True)
after two steps; the batch norm's moving mean moves while training.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as ec
from estimator_compat import v1
from estimator_compat.canned import dnn
from estimator_compat.canned.dnn_model import check_units

_TF215_VARIABLES = [
    "dnn/hiddenlayer_0/batchnorm_0/beta",
    "dnn/hiddenlayer_0/batchnorm_0/gamma",
    "dnn/hiddenlayer_0/batchnorm_0/moving_mean",
    "dnn/hiddenlayer_0/batchnorm_0/moving_variance",
    "dnn/hiddenlayer_0/bias", "dnn/hiddenlayer_0/kernel",
    "dnn/logits/bias", "dnn/logits/kernel", "global_step",
    "training/Adagrad/decay",
    "training/Adagrad/dnn/hiddenlayer_0/batchnorm_0/beta/accumulator",
    "training/Adagrad/dnn/hiddenlayer_0/batchnorm_0/gamma/accumulator",
    "training/Adagrad/dnn/hiddenlayer_0/bias/accumulator",
    "training/Adagrad/dnn/hiddenlayer_0/kernel/accumulator",
    "training/Adagrad/dnn/logits/bias/accumulator",
    "training/Adagrad/dnn/logits/kernel/accumulator",
    "training/Adagrad/learning_rate"]


def _input_fn():
  x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
  return tf.data.Dataset.from_tensor_slices(
      ({"x": x}, np.arange(4.0, dtype=np.float32))).batch(2)


def _trained(regressor_class, model_dir):
  """A DNN regressor with dropout and batch norm, after two steps, and the
  names of its checkpoint's variables."""
  regressor = regressor_class(
      hidden_units=[3],
      feature_columns=[tf.feature_column.numeric_column("x", shape=(2,))],
      dropout=0.5, batch_norm=True, model_dir=str(model_dir),
      config=ec.RunConfig(tf_random_seed=1))
  regressor.train(_input_fn, steps=2)
  return regressor, sorted(
      name for name, _ in tf.train.list_variables(str(model_dir)))


def test_dropout_and_batch_norm_train_the_estimators_variables(
    engine_name, tmp_path):
  del engine_name
  regressor, names = _trained(ec.DNNRegressor, tmp_path)
  assert names == _TF215_VARIABLES
  moving_mean = tf.train.load_variable(
      str(tmp_path), "dnn/hiddenlayer_0/batchnorm_0/moving_mean")
  assert np.any(moving_mean != 0.0)
  metrics = regressor.evaluate(_input_fn, steps=1)
  assert metrics["global_step"] == 2 and np.isfinite(metrics["loss"])


@pytest.mark.parametrize("units", ["2", 2.0, True])
def test_the_logits_dimension_must_be_an_int(units):

  with pytest.raises(ValueError, match="units must be an int.  Given type"):
    check_units(units)


_TF215_V1_VARIABLES = sorted(
    [name for name in _TF215_VARIABLES
     if name.startswith("dnn/") or name == "global_step"] +
    [f"dnn/hiddenlayer_0/{name}/t_0/Adagrad" for name in (
        "batchnorm_0/beta", "batchnorm_0/gamma", "bias", "kernel")] +
    ["dnn/logits/bias/t_0/Adagrad", "dnn/logits/kernel/t_0/Adagrad"])


@pytest.mark.parametrize("engine", [None, "graph"])
def test_the_v1_dnn_with_dropout_and_batch_norm(engine, tmp_path, monkeypatch):
  if engine:
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", engine)
  else:
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  regressor, names = _trained(v1.DNNRegressor, tmp_path)
  assert names == _TF215_V1_VARIABLES


def test_the_v2_model_fn_for_a_tpu_is_refused_with_the_fix():
  # docs/known_differences.md, dnn-model-fn-v2-use-tpu.
  features, labels = next(iter(_input_fn()))
  with pytest.raises(NotImplementedError, match="Fix: use_tpu=False"):
    dnn.dnn_model_fn_v2(
        features, labels, ec.ModeKeys.TRAIN, ec.RegressionHead(), [3],
        [tf.feature_column.numeric_column("x", shape=(2,))], use_tpu=True)
