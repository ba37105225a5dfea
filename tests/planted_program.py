"""A small legacy program, and the same program with one migration mistake.

`model_fn` reads what to get wrong from params (all off by default), so the
migration tests can plant each mistake the checks must catch: dropout left on
in EVAL, a learning-rate schedule off by one step, Adam's epsilon changed,
a variable initialized differently, a missing UPDATE_OPS dependency, and
labels shuffled differently (`labels_shuffled_input_fn`).
"""

import numpy as np
import tensorflow as tf

PARAMS = {"boundary": 5, "epsilon": 1e-8, "dropout_in_eval": False,
          "kernel_initializer": "glorot_uniform", "update_ops": True}
_RNG = np.random.RandomState(7)
X = _RNG.normal(size=(96, 8)).astype(np.float32)
Y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1)


def model_fn(features, labels, mode, params):
  params = dict(PARAMS, **(params or {}))
  training = mode == tf.estimator.ModeKeys.TRAIN
  initializer = (tf.compat.v1.glorot_uniform_initializer()
                 if params["kernel_initializer"] == "glorot_uniform" else
                 tf.compat.v1.truncated_normal_initializer(stddev=0.1))
  net = tf.compat.v1.layers.dense(features["x"], 16,
                                  kernel_initializer=initializer)
  net = tf.compat.v1.layers.batch_normalization(net, training=training)
  net = tf.nn.relu(net)
  net = tf.compat.v1.layers.dropout(
      net, rate=0.3, training=training or params["dropout_in_eval"])
  logits = tf.compat.v1.layers.dense(net, 3)
  predictions = {"logits": logits, "classes": tf.argmax(logits, axis=1)}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  step = tf.compat.v1.train.get_global_step()
  learning_rate = tf.compat.v1.train.piecewise_constant(
      step, [np.int64(params["boundary"])], [0.02, 0.005])
  optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate,
                                               epsilon=params["epsilon"])
  updates = (tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
             if params["update_ops"] else [])
  with tf.control_dependencies(updates):
    train_op = optimizer.minimize(loss, global_step=step)
  metrics = {"accuracy": tf.compat.v1.metrics.accuracy(
      labels, predictions["classes"])}
  return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                    train_op=train_op,
                                    eval_metric_ops=metrics)


def input_fn(mode):
  dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
  if mode == tf.estimator.ModeKeys.TRAIN:
    dataset = dataset.shuffle(96, seed=3).repeat()
  return dataset.batch(16)


def labels_shuffled_input_fn(mode):
  """The mistake: features and labels shuffled by two different seeds."""
  if mode != tf.estimator.ModeKeys.TRAIN:
    return input_fn(mode)
  features = tf.data.Dataset.from_tensor_slices({"x": X}).shuffle(96, seed=3)
  labels = tf.data.Dataset.from_tensor_slices(Y).shuffle(96, seed=4)
  return tf.data.Dataset.zip((features, labels)).repeat().batch(16)


def adam_epsilon_mistake_model_fn(features, labels, mode):
  """The program migrated with Keras' Adam epsilon (1e-7) instead of 1e-8."""
  return model_fn(features, labels, mode, dict(PARAMS, epsilon=1e-7))
