"""A legacy batch-norm program and its TF2 rewrite as a train_step factory.

The rewrite keeps its own variables (named as the legacy ones, so the map
pairs them by name) and a tf-keras Adam; `update_moving_averages=False`
plants the TF2 form of a missing UPDATE_OPS dependency: the moving mean and
variance are never assigned, so inference uses their initial values.
"""

import numpy as np
import tensorflow as tf

_RNG = np.random.RandomState(5)
X = _RNG.normal(size=(128, 6)).astype(np.float32)
Y = (X[:, 0] - X[:, 3] > 0).astype(np.int64) + (X[:, 1] > 0.8)
MOMENTUM, EPSILON, LEARNING_RATE = 0.99, 1e-3, 0.01


def model_fn(features, labels, mode):
  training = mode == tf.estimator.ModeKeys.TRAIN
  # No bias before batch norm: its gradient is zero up to rounding, which
  # Adam would blow up into steps of random sign.
  net = tf.compat.v1.layers.dense(features["x"], 16, use_bias=False)
  net = tf.compat.v1.layers.batch_normalization(net, training=training)
  logits = tf.compat.v1.layers.dense(tf.nn.relu(net), 3)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=logits)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.compat.v1.train.AdamOptimizer(LEARNING_RATE)
  with tf.control_dependencies(tf.compat.v1.get_collection(
      tf.compat.v1.GraphKeys.UPDATE_OPS)):
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
  accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    predictions=logits,
                                    eval_metric_ops={"accuracy": accuracy})


def input_fn(mode):
  dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
  if mode == tf.estimator.ModeKeys.TRAIN:
    dataset = dataset.shuffle(128, seed=2).repeat()
  return dataset.batch(32)


def _variable(name, shape, initial):
  return tf.Variable(initial(shape), name=name)


def factory(update_moving_averages: bool = True):
  """The TF2 rewrite: plain variables, a tf.function step, tf-keras Adam."""
  glorot, zeros = tf.keras.initializers.GlorotUniform(), tf.zeros
  kernel = _variable("dense/kernel", [6, 16], glorot)
  gamma = _variable("batch_normalization/gamma", [16], tf.ones)
  beta = _variable("batch_normalization/beta", [16], zeros)
  moving_mean = tf.Variable(tf.zeros([16]), trainable=False,
                            name="batch_normalization/moving_mean")
  moving_variance = tf.Variable(tf.ones([16]), trainable=False,
                                name="batch_normalization/moving_variance")
  kernel_1 = _variable("dense_1/kernel", [16, 3], glorot)
  bias_1 = _variable("dense_1/bias", [3], zeros)
  trainable = [kernel, gamma, beta, kernel_1, bias_1]
  optimizer = tf.keras.optimizers.Adam(LEARNING_RATE, epsilon=1e-8)

  def logits_of(features, training):
    net = tf.matmul(features["x"], kernel)
    if training:
      mean, variance = tf.nn.moments(net, axes=[0])
      if update_moving_averages:
        moving_mean.assign(moving_mean * MOMENTUM + mean * (1 - MOMENTUM))
        moving_variance.assign(moving_variance * MOMENTUM +
                               variance * (1 - MOMENTUM))
    else:
      mean, variance = moving_mean, moving_variance
    net = tf.nn.batch_normalization(net, mean, variance, beta, gamma, EPSILON)
    return tf.matmul(tf.nn.relu(net), kernel_1) + bias_1

  def loss_fn(features, labels, training=True):
    logits = logits_of(features, training)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    return loss, logits

  @tf.function
  def train_step(features, labels):
    with tf.GradientTape() as tape:
      loss, _ = loss_fn(features, labels)
    optimizer.apply_gradients(zip(tape.gradient(loss, trainable), trainable))
    return loss

  def evaluate(batches):
    losses, correct, total = [], 0, 0
    for features, labels in batches:
      loss, logits = loss_fn(features, labels, training=False)
      losses.append(float(loss))
      correct += int(np.sum(np.argmax(logits, 1) == labels))
      total += len(labels)
    return {"accuracy": correct / total, "loss": float(np.mean(losses))}

  return {"train_step": train_step, "loss": loss_fn, "optimizer": optimizer,
          "predict": lambda features: logits_of(features, False),
          "evaluate": evaluate,
          "variables": trainable + [moving_mean, moving_variance]}
