"""A TF1-era program: every input_fn returns a one-shot iterator's get_next().

The shape of nearly every TF1 sample: `input_fn` builds a Dataset and
returns `tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()`. The
Estimator evaluated those tensors at every step: 10 rows in batches of 4 are
3 steps (the last of 2 rows), then the input ends. Only a migration golden
(tests/migration_goldens/one_shot) is recorded for it.
"""

import numpy as np
import tensorflow as tf

from tests.golden_programs import _data

X, Y = _data.classification(10, 3, 2, seed=5)
Y = Y.astype(np.float32).reshape(-1, 1)


def _one_shot(dataset):
  return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()


def train_input_fn():
  return _one_shot(tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4))


def eval_input_fn():
  return _one_shot(tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(3))


def predict_input_fn():
  return _one_shot(tf.data.Dataset.from_tensor_slices({"x": X}).batch(4))


def model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features["x"], 1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  accuracy = tf.compat.v1.metrics.accuracy(labels, tf.cast(logits > 0,
                                                           tf.float32))
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={"accuracy": accuracy})
