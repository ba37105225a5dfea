"""Trains a model_fn that asks for a GPU this machine lacks; prints weights.

Run by tests/test_soft_placement.py in a process of its own: whether eager
ops place softly is fixed when TensorFlow's eager context starts, so nothing
may start it before the Estimator does. Argument: the engine to run on.
"""

import json
import sys
import tempfile

import numpy as np
import tensorflow as tf

# pylint: disable=g-import-not-at-top,wrong-import-position
import estimator_compat as tfe
from tests import models

# No machine this runs on has eight GPUs.
MISSING = "/gpu:7"


def model_fn(features, labels, mode):
  with tf.device(MISSING):
    weights = tf.compat.v1.get_variable(
        "w", [4, 1], initializer=tf.compat.v1.constant_initializer(0.1))
    logits = tf.matmul(features["x"], weights)
  return models.binary_sgd_spec(mode, labels, logits)


def input_fn():
  x = (np.arange(32, dtype=np.float32).reshape(8, 4) / 32) - 0.4
  y = np.array([[1.], [0.], [1.], [1.], [0.], [1.], [0.], [0.]], np.float32)
  return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)


def main(engine):
  estimator = tfe.Estimator(model_fn, tempfile.mkdtemp(),
                            config=tfe.RunConfig(engine=engine))
  estimator.train(input_fn, steps=3)
  metrics = estimator.evaluate(input_fn, steps=1)
  print(json.dumps({
      "weights": estimator.get_variable_value("w").ravel().tolist(),
      "loss": float(metrics["loss"]),
      "gpus": [d.name for d in tf.config.list_logical_devices("GPU")]}))


if __name__ == "__main__":
  main(sys.argv[1])
