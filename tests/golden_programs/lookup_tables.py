"""String features and labels mapped to ids by lookup tables in the model_fn.

The tables (a v1 feature column's vocabulary list, which builds its table
with `index_table_from_tensor`; `StaticVocabularyTable` and `StaticHashTable`
from `tf.compat.v1.lookup` and `tf.lookup`, from tensors and from a
vocabulary file; a reverse table for the predicted class names) are
created by the model_fn, so they are initialized by the Scaffold's
local_init_op (the TABLE_INITIALIZERS collection), in every mode and in the
exported SavedModel.
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 24
CONFIG = dict(tf_random_seed=5, save_checkpoints_steps=12)
PARAMS = {"learning_rate": 0.2}
COLORS = ["red", "green", "blue", "black"]
SHAPES = ["circle", "square", "star"]
LABELS = ["no", "yes", "maybe"]
_RNG = np.random.RandomState(3)
ROWS = 96
COLOR = np.array(COLORS + ["white"])[_RNG.randint(0, 5, ROWS)]  # white: OOV
SHAPE = np.array(SHAPES)[_RNG.randint(0, 3, ROWS)]
SIZE = _RNG.normal(size=(ROWS, 1)).astype(np.float32)
LABEL = np.array(LABELS)[(_RNG.randint(0, 3, ROWS))]
_VOCAB = os.path.join(tempfile.gettempdir(), "estimator_compat_golden_shapes.txt")
with open(_VOCAB, "w") as _f:
  _f.write("\n".join(SHAPES) + "\n")


def model_fn(features, labels, mode, params):
  color_column = tf.compat.v1.feature_column.indicator_column(
      tf.compat.v1.feature_column.categorical_column_with_vocabulary_list(
          "color", COLORS, num_oov_buckets=1))
  color = tf.compat.v1.feature_column.input_layer(features, [color_column])
  color_ids = tf.compat.v1.lookup.StaticVocabularyTable(
      tf.compat.v1.lookup.KeyValueTensorInitializer(
          tf.constant(COLORS), tf.range(len(COLORS), dtype=tf.int64)),
      num_oov_buckets=1).lookup(features["color"])
  shape_ids = tf.lookup.StaticHashTable(
      tf.lookup.TextFileInitializer(
          _VOCAB, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
          tf.lookup.TextFileIndex.LINE_NUMBER), -1).lookup(features["shape"])
  vocabulary = tf.lookup.StaticVocabularyTable(
      tf.lookup.KeyValueTensorInitializer(
          tf.constant(SHAPES), tf.range(3, dtype=tf.int64)),
      num_oov_buckets=1)
  shape_ids_v2 = vocabulary.lookup(features["shape"])
  color = color + tf.one_hot(color_ids, len(COLORS) + 1)
  shape = tf.one_hot(shape_ids, len(SHAPES)) + tf.one_hot(shape_ids_v2, 4)[
      :, :3]
  inputs = tf.concat([color, shape, features["size"]], axis=1)
  logits = tf.compat.v1.layers.dense(inputs, len(LABELS))
  class_ids = tf.argmax(logits, axis=1)
  names = tf.compat.v1.lookup.StaticHashTable(
      tf.compat.v1.lookup.KeyValueTensorInitializer(
          tf.range(len(LABELS), dtype=tf.int64), tf.constant(LABELS)),
      "?").lookup(class_ids)
  predictions = {"class_ids": class_ids, "classes": names}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  label_table = tf.lookup.StaticHashTable(
      tf.lookup.KeyValueTensorInitializer(
          tf.constant(LABELS), tf.constant([0, 1, 2], tf.int64)), -1)
  label_ids = label_table.lookup(tf.reshape(labels, [-1]))
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(label_ids, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(
      params["learning_rate"]).minimize(
          loss, global_step=tf.compat.v1.train.get_global_step())
  metrics = {"accuracy": tf.compat.v1.metrics.accuracy(label_ids, class_ids)}
  return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                    train_op=train_op, eval_metric_ops=metrics)


def _features(rows):
  return {"color": COLOR[rows], "shape": SHAPE[rows], "size": SIZE[rows]}


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices((_features(slice(None)),
                                                LABEL))
  return dataset.repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(
      (_features(slice(None)), LABEL)).batch(32)


def predict_input_fn():
  return tf.data.Dataset.from_tensor_slices(_features(slice(0, 10))).batch(4)


def serving_input_receiver_fn():
  return tf.estimator.export.build_raw_serving_input_receiver_fn({
      "color": tf.constant(["red"]), "shape": tf.constant(["star"]),
      "size": tf.zeros([1, 1])})()


def serving_inputs():
  """What a serving request feeds, by signature input name."""
  return _features(slice(0, 6))
