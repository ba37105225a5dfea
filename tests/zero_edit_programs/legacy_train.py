"""A legacy tf.estimator program with no mention of estimator_compat.

  python legacy_train.py MODEL_DIR [--steps N] [--exit_code K] [--fail]

Trains a one-weight regression for --steps steps, prints one `RESULT {json}`
line (its argv, sys.path[0], __name__, the global step, where
tf.estimator.Estimator comes from) and exits with --exit_code. --fail raises
a ValueError from check_data() before training.
"""

import argparse
import json
import sys

import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode):
  w = tf.compat.v1.get_variable(
      "w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
  predictions = tf.matmul(features["x"], w)
  loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  x = np.arange(8, dtype=np.float32).reshape(8, 1) / 8
  return tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).repeat().batch(4)


def check_data(fail):
  if fail:
    raise ValueError("legacy_train: bad data")


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("model_dir")
  parser.add_argument("--steps", type=int, default=5)
  parser.add_argument("--exit_code", type=int, default=0)
  parser.add_argument("--fail", action="store_true")
  args = parser.parse_args()
  check_data(args.fail)
  estimator = tf.estimator.Estimator(model_fn, model_dir=args.model_dir)
  estimator.train(input_fn, steps=args.steps)
  print("RESULT " + json.dumps({
      "argv": sys.argv,
      "path0": sys.path[0],
      "name": __name__,
      "global_step": int(estimator.get_variable_value("global_step")),
      "estimator": tf.estimator.Estimator.__module__,
  }), flush=True)
  return args.exit_code


if __name__ == "__main__":
  sys.exit(main())
