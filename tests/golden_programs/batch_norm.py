"""Batch norm with UPDATE_OPS as a control dependency, v1 Momentum."""

import tensorflow as tf

from tests.golden_programs import _data

TRAIN_STEPS = 40
CONFIG = dict(tf_random_seed=21, save_checkpoints_steps=100)
PARAMS = {"learning_rate": 0.05}
X, Y = _data.classification(200, 6, 3, seed=2)


def model_fn(features, labels, mode, params):
  training = mode == tf.estimator.ModeKeys.TRAIN
  net = tf.compat.v1.layers.dense(features, 16, use_bias=False)
  net = tf.compat.v1.layers.batch_normalization(net, training=training)
  net = tf.nn.relu(net)
  logits = tf.compat.v1.layers.dense(net, 3)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=logits)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.compat.v1.train.MomentumOptimizer(params["learning_rate"],
                                                   momentum=0.9)
  update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
  with tf.control_dependencies(update_ops):
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
  metrics = {"accuracy": tf.compat.v1.metrics.accuracy(
      labels, tf.argmax(logits, axis=1))}
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops=metrics)


def train_input_fn(params):
  del params
  return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(20)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((X, Y)).batch(50)


def predict_input_fn():
  return tf.data.Dataset.from_tensor_slices(X[:12]).batch(4)
