"""A 64 -> hidden -> 10 MLP classifier, written as legacy Estimator code.

Plain TF1-era code: tf.compat.v1.layers, a v1 optimizer with global_step,
v1 metrics and an input_fn that returns a tf.data.Dataset. The data are
synthetic "digits": ten noisy prototypes in 64 dimensions.
"""

import numpy as np
import tensorflow as tf

DIM, CLASSES = 64, 10


def make_data(rows, seed):
  prototypes = np.random.RandomState(0).normal(size=(CLASSES, DIM))
  rng = np.random.RandomState(seed)
  labels = rng.randint(0, CLASSES, size=rows)
  images = prototypes[labels] + rng.normal(scale=1.5, size=(rows, DIM))
  return images.astype(np.float32), labels.astype(np.int64)


def model_fn(features, labels, mode, params):
  net = features["image"]
  for units in params.get("hidden_units", [128]):
    net = tf.compat.v1.layers.dense(net, units, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(net, CLASSES)
  classes = tf.argmax(logits, axis=1)
  predictions = {"classes": classes, "probabilities": tf.nn.softmax(logits)}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.compat.v1.train.AdamOptimizer(params.get("learning_rate",
                                                          0.001))
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(
      mode, predictions=predictions, loss=loss, train_op=train_op,
      eval_metric_ops={
          "accuracy": tf.compat.v1.metrics.accuracy(labels, classes)})


def input_fn(mode, params):
  training = mode == tf.estimator.ModeKeys.TRAIN
  images, labels = make_data(2000 if training else 500, seed=1 if training
                             else 2)
  dataset = tf.data.Dataset.from_tensor_slices(({"image": images}, labels))
  if training:
    dataset = dataset.shuffle(2000, seed=1).repeat()
  return dataset.batch(params.get("batch_size", 64))


def serving_input_receiver_fn():
  """Serving takes serialized tf.Examples with an 'image' float list."""
  spec = {"image": tf.io.FixedLenFeature([DIM], tf.float32)}
  return tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)()
