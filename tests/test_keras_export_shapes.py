"""Exporting a model_to_estimator checkpoint through a narrower serving input.

The Estimator's Saver restored resource variables as stored, whatever shape
the export graph built them with (tensorflow-estimator's own
test_export_keras_estimator_name_ckpt exports a model trained on 10 inputs
through a serving feature of 1); export made no shape check of its own.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat
from estimator_compat.export import build_parsing_serving_input_receiver_fn

estimator_compat.install()


@pytest.mark.parametrize("engine", ["default", "graph", "function"])
def test_name_based_checkpoint_exports_without_shape_check(tmp_path,
                                                           monkeypatch,
                                                           engine):
  if engine == "default":
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  else:
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", engine)
  tf.keras.backend.clear_session()  # Layer names dense, dense_1.
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(3, input_shape=(10,), bias_initializer="ones"),
      tf.keras.layers.Dense(2)])
  model.compile(loss="mse", optimizer="sgd")
  bias = tf.keras.backend.get_value(model.layers[0].bias)
  est = tf.keras.estimator.model_to_estimator(
      keras_model=model, model_dir=str(tmp_path / "model"),
      checkpoint_format="saver")
  receiver_fn = build_parsing_serving_input_receiver_fn(
      {"dense_input": tf.io.FixedLenFeature([1], tf.float32)})
  export_dir = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
  variables = os.path.join(export_dir.decode(), "variables", "variables")
  np.testing.assert_allclose(tf.train.load_variable(variables, "dense/bias"),
                             bias)
  # Stored as restored, the checkpoint's shape.
  assert tf.train.load_variable(variables, "dense/kernel").shape == (10, 3)
