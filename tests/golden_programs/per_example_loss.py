"""A per-example loss at batch size 1 (TF's "metrics and optimizers" guide).

The loss `tf.math.abs(labels - logits)` has shape (None, 1): not a scalar,
but one value per batch of one. The Estimator accepted it (a loss whose
static shape may hold one element is reshaped to a scalar at run time).
"""

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 6
CONFIG = dict(tf_random_seed=9, save_checkpoints_steps=3)
PARAMS = None
FEATURES = np.array([[1.], [2.], [3.], [4.], [5.]], np.float32)
LABELS = np.array([[1.], [1.], [0.], [1.], [0.]], np.float32)


def model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.Dense(1)(features)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=logits)
  loss = tf.math.abs(labels - logits)
  optimizer = tf.compat.v1.train.AdagradOptimizer(0.05)
  train_op = optimizer.minimize(loss,
                                global_step=tf.compat.v1.train.get_global_step())
  accuracy = tf.compat.v1.metrics.accuracy(
      labels=labels, predictions=tf.math.rint(logits))
  precision = tf.compat.v1.metrics.precision(
      labels=labels, predictions=logits)
  recall = tf.compat.v1.metrics.recall(labels=labels, predictions=logits)
  return tf.estimator.EstimatorSpec(
      mode, loss=loss, train_op=train_op,
      eval_metric_ops={"accuracy": accuracy, "precision": precision,
                       "recall": recall})


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(1)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(1)


def predict_input_fn():
  return tf.data.Dataset.from_tensor_slices(FEATURES).batch(1)
