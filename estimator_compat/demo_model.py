"""The binary's embedded default: the seed document's model, fixed.

The seed program (examples/seed/) trains a 10 -> 128 -> 10 Keras MLP inside a
legacy model_fn. This is that model with its bugs fixed, on a learnable
synthetic task (the class is the arg-max of a fixed projection of the input),
so `python -m estimator_compat.train` with no flags trains and evaluates
something meaningful.
"""

import numpy as np
import tensorflow as tf

from estimator_compat.inputs import numpy_input_fn
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.spec import EstimatorSpec

FEATURES, CLASSES = 10, 10


def _data(rows: int, seed: int):
  projection = np.random.RandomState(0).normal(size=(FEATURES, CLASSES))
  x = np.random.RandomState(seed).random_sample((rows, FEATURES))
  y = np.argmax((x - 0.5) @ projection, axis=1)
  return x.astype(np.float32), y.astype(np.int64)


def model_fn(features, labels, mode, params):
  """The seed's Keras MLP as a legacy model_fn, with accuracy in EVAL."""
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(params.get("hidden", 128), activation="relu",
                            input_shape=(FEATURES,)),
      tf.keras.layers.Dense(CLASSES),
  ])
  logits = model(features["feature"])
  classes = tf.argmax(logits, axis=1)
  if mode == ModeKeys.PREDICT:
    return EstimatorSpec(mode, predictions={"classes": classes,
                                            "logits": logits})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.AdamOptimizer(
      params.get("learning_rate", 0.01)).minimize(
          loss, global_step=tf.compat.v1.train.get_global_step())
  return EstimatorSpec(
      mode, predictions={"classes": classes}, loss=loss, train_op=train_op,
      eval_metric_ops={"accuracy": tf.compat.v1.metrics.accuracy(labels,
                                                                 classes)})


def input_fn(mode, params):
  """Training data (shuffled, repeated) or held-out data (one pass)."""
  batch_size = params.get("batch_size", 32)
  if mode == ModeKeys.TRAIN:
    x, y = _data(1000, seed=1)
    return numpy_input_fn({"feature": x}, y, batch_size=batch_size,
                          num_epochs=None, shuffle=True)()
  x, y = _data(500, seed=2)
  return numpy_input_fn({"feature": x}, y, batch_size=batch_size,
                        num_epochs=1, shuffle=False)()
