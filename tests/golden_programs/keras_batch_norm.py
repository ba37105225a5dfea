"""A tf.keras BatchNormalization beside a tf.compat.v1 one, UPDATE_OPS deps.

On TF 2.15 only the tf.compat.v1 layer's updates are in UPDATE_OPS, so its
moving statistics train while the Keras layer's stay at their initial
values (issue 23).
"""

import tensorflow as tf

from tests.golden_programs import _data

TRAIN_STEPS = 12
CONFIG = dict(tf_random_seed=23, save_checkpoints_steps=100)
PARAMS = {"learning_rate": 0.05}
X, Y = _data.classification(60, 5, 3, seed=23)


def model_fn(features, labels, mode, params):
  training = mode == tf.estimator.ModeKeys.TRAIN
  net = tf.compat.v1.layers.dense(features, 8, use_bias=False)
  net = tf.keras.layers.BatchNormalization(name="keras_bn")(
      net, training=training)
  net = tf.nn.relu(net)
  net = tf.compat.v1.layers.dense(net, 8, use_bias=False)
  net = tf.compat.v1.layers.batch_normalization(net, training=training,
                                                name="v1_bn")
  logits = tf.compat.v1.layers.dense(tf.nn.relu(net), 3)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=logits)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(
      params["learning_rate"])
  update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
  with tf.control_dependencies(update_ops):
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
