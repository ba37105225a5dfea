"""A TF1-era model_fn: tf.layers, a tf.train optimizer, a TF1 summary."""
from tensorflow_estimator import estimator as tfe  # TF 2.15: tf.compat.v1.estimator
import tensorflow as tf


def model_fn(features, labels, mode, params=None):
  del params
  net = tf.layers.dense(  # first layer
      features["x"], 8,
      activation=tf.nn.relu)
  logits = tf . layers . dense(net, 2)  # spaced-out attribute access
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  tf.summary.scalar('loss_copy',loss)   # TF1 summary, 'single' quotes
  optimizer = (tf.train
               .GradientDescentOptimizer(0.1))  # split over two lines
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)
