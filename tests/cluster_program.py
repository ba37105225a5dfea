"""A legacy Estimator program, as a user runs it on each task of a cluster.

  python tests/cluster_program.py MODEL_DIR MAX_STEPS [distribution flags]

It uses only tf.estimator (through install()), learnable deterministic data
and train_and_evaluate, so every TF_CONFIG role runs this same file. The
chief prints `RESULT {...}` with its final evaluation.
"""

import json
import sys

import numpy as np

import estimator_compat
import tensorflow as tf

estimator_compat.install()

_RNG = np.random.RandomState(7)
X = _RNG.normal(size=(2000, 10)).astype(np.float32)
Y = np.argmax(X @ _RNG.normal(size=(10, 4)), axis=1).astype(np.int64)


def model_fn(features, labels, mode):
  hidden = tf.compat.v1.layers.dense(features, 32, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(hidden, 4)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=tf.argmax(logits, 1))
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={"accuracy": accuracy})


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(
      2000, seed=1).repeat().batch(32)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((X, Y)).batch(500)


def main(model_dir, max_steps):
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1,
                                  save_checkpoints_steps=50,
                                  log_step_count_steps=50)
  estimator = tf.estimator.Estimator(model_fn, config=config)
  result, _ = tf.estimator.train_and_evaluate(
      estimator, tf.estimator.TrainSpec(train_input_fn, max_steps=max_steps),
      tf.estimator.EvalSpec(eval_input_fn, start_delay_secs=0,
                            throttle_secs=1))
  if result is not None:
    print("RESULT " + json.dumps({k: float(v) for k, v in result.items()}),
          flush=True)


if __name__ == "__main__":
  main(sys.argv[1], int(sys.argv[2]))
