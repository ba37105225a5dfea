"""tf.estimator.BoostedTreesRegressor (tensorflow-estimator 2.8) with a
weight column and a raw numeric column of repeated values: the weighted
quantile sketch decides the bucket boundaries (two batches), then two
trees of depth 2 grow on them."""

import numpy as np
import tensorflow as tf

from tests.golden_programs import _boosted_trees_data as data

TRAINS_ON_GRAPH_ENGINE = True
_FARE = np.round(data.FEATURES["fare"] * 2.0) / 2.0
# Weights falling with the fare: the weighted boundaries are not the
# unweighted ones ([0, 0.5, 2, 3.5, 4.5] against [0, 1, 2, 3.5, 4.5]).
FEATURES = {
    "fare": _FARE,
    "cls": data.FEATURES["cls"],
    "w": (1.0 / (0.5 + _FARE)).astype(np.float32),
}
reset = data.reset
observations = data.observations


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices((FEATURES, data.TARGET))
  return dataset.repeat().batch(data.BATCH)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(
      (FEATURES, data.TARGET)).batch(data.N)


def predict_input_fn():
  return tf.data.Dataset.from_tensor_slices(FEATURES).batch(data.N)


def columns(fc):
  return [fc.numeric_column("fare"),
          fc.indicator_column(fc.categorical_column_with_vocabulary_list(
              "cls", ["first", "second", "third"]))]


def build_estimator(tf_module, model_dir):
  return tf_module.estimator.BoostedTreesRegressor(
      feature_columns=columns(tf_module.feature_column),
      n_batches_per_layer=2, model_dir=model_dir, weight_column="w",
      n_trees=2, max_depth=2, learning_rate=0.5,
      quantile_sketch_epsilon=0.2, config=data.config(tf_module))


def run_training(tf_module, estimator):
  del tf_module
  data.run_training(estimator, train_input_fn)
