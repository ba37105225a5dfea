"""The benchmark model: a 784-128-10 MLP, batch 256, v1 Adam (legacy code).

Uses `tf.estimator.EstimatorSpec`, so the same file serves the real Estimator
(TF 2.15) and estimator_compat (after install()).
"""

import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode):
  hidden = tf.compat.v1.layers.dense(features["x"], 128, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(hidden, 10)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  rng = np.random.RandomState(0)
  x = rng.rand(4096, 784).astype(np.float32)
  y = rng.randint(0, 10, 4096).astype(np.int64)
  return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(
      256).prefetch(4)
