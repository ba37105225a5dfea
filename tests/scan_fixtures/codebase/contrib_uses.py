"""tf.contrib and other names TensorFlow 2 removed."""
import tensorflow as tf
from tensorflow.contrib import slim
import tensorflow.contrib.layers as contrib_layers


def net(x):
  x = tf.contrib.layers.fully_connected(x, 4)
  x = slim.dropout(x)
  params = tf.contrib.training.HParams(learning_rate=0.1)
  return contrib_layers.flatten(x), params, tf.Session
