"""The 3-class dense model of the TF1-strategy-object cases (no side effects).

Used in process by tests/test_strategies.py and, with eager execution
disabled, by tests/tf1_strategy_objects_program.py.
"""

import numpy as np
import tensorflow as tf

import estimator_compat as tfe


def model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(
      features["x"], 3, kernel_initializer=tf.compat.v1.ones_initializer())
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op,
                           eval_metric_ops={"accuracy": accuracy})


def input_fn():
  x = np.arange(48, dtype=np.float32).reshape(16, 3) / 10.
  y = np.array([0, 1, 2, 0, 1, 2, 0, 1] * 2)
  return tf.compat.v1.data.Dataset.from_tensor_slices(
      ({"x": x}, y)).repeat().batch(4)
