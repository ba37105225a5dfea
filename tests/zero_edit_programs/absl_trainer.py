"""A legacy absl trainer binary with no mention of estimator_compat.

  python absl_trainer.py --model_dir=DIR [--train_steps=N] [--exit_code=K]

Runs train_and_evaluate on a one-weight regression, prints one
`RESULT {json}` line and returns --exit_code from main (app.run exits with
it).
"""

import json
import sys

from absl import app
from absl import flags
import numpy as np
import tensorflow as tf

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Checkpoints go here.")
flags.DEFINE_integer("train_steps", 5, "Steps to train.")
flags.DEFINE_integer("exit_code", 0, "What main returns.")


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


def main(argv):
  del argv
  estimator = tf.estimator.Estimator(model_fn, model_dir=FLAGS.model_dir)
  train_spec = tf.estimator.TrainSpec(input_fn, max_steps=FLAGS.train_steps)
  eval_spec = tf.estimator.EvalSpec(input_fn, steps=1, throttle_secs=0)
  metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec,
                                               eval_spec)
  print("RESULT " + json.dumps({
      "argv": sys.argv,
      "path0": sys.path[0],
      "global_step": int(metrics["global_step"]),
      "estimator": tf.estimator.Estimator.__module__,
  }), flush=True)
  return FLAGS.exit_code


if __name__ == "__main__":
  app.run(main)
