"""A legacy early-stopping program, as a user runs it on a cluster.

  python tests/cluster_early_stop_program.py MODEL_DIR [distribution flags]

train_and_evaluate for up to 100000 steps with a make_early_stopping_hook
whose should_stop_fn (asked by the chief every 10 steps) says stop once a
checkpoint at step 60 or later exists. The chief prints `RESULT {...}`.
"""

import json
import sys

import numpy as np

import estimator_compat
import tensorflow as tf

estimator_compat.install()

_RNG = np.random.RandomState(3)
X = _RNG.normal(size=(512, 6)).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int64)


def model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features, 2)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(32)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((X, Y)).batch(256)


def main(model_dir):
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1,
                                  save_checkpoints_steps=20)
  estimator = tf.estimator.Estimator(model_fn, config=config)

  def trained_enough():
    path = tf.train.latest_checkpoint(model_dir)
    return bool(path) and int(path.rsplit("-", 1)[1]) >= 60

  hook = tf.estimator.experimental.make_early_stopping_hook(
      estimator, trained_enough, run_every_secs=None, run_every_steps=10)
  result, _ = tf.estimator.train_and_evaluate(
      estimator, tf.estimator.TrainSpec(train_input_fn, max_steps=100000,
                                        hooks=[hook]),
      tf.estimator.EvalSpec(eval_input_fn, start_delay_secs=0,
                            throttle_secs=1))
  if result is not None:
    print("RESULT " + json.dumps({k: float(v) for k, v in result.items()}),
          flush=True)


if __name__ == "__main__":
  main(sys.argv[1])
