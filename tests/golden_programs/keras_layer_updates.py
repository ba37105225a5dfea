"""A tf.keras BatchNormalization whose `layer.updates` the train op runs.

On TF 2.15 the Keras layer's updates are not in UPDATE_OPS, but its
`updates` list them, so a model_fn that makes its train op depend on them
trains the moving statistics (differential finding G15).
"""

import tensorflow as tf

from tests.golden_programs import _data

TRAIN_STEPS = 12
CONFIG = dict(tf_random_seed=29, save_checkpoints_steps=100)
PARAMS = {"learning_rate": 0.05}
X, Y = _data.classification(60, 5, 3, seed=29)


def model_fn(features, labels, mode, params):
  training = mode == tf.estimator.ModeKeys.TRAIN
  net = tf.compat.v1.layers.dense(features, 8, use_bias=False)
  batch_norm = tf.keras.layers.BatchNormalization(name="keras_bn")
  net = batch_norm(net, training=training)
  logits = tf.compat.v1.layers.dense(tf.nn.relu(net), 3)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=logits)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(
      params["learning_rate"])
  with tf.control_dependencies(batch_norm.updates):
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_input_fn(params):
  del params
  return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(15)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((X, Y)).batch(30)


def predict_input_fn():
  return tf.data.Dataset.from_tensor_slices(X[:8]).batch(4)
