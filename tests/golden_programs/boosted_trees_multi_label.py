"""tf.estimator.BoostedTreesRegressor (tensorflow-estimator 2.8) with
label_dimension=2: vector leaves from 2 gradients and a 2 x 2 hessian per
example, L2, in memory (one batch per layer), a raw numeric column."""

import numpy as np
import tensorflow as tf

from tests.golden_programs import _boosted_trees_data as data

TRAINS_ON_GRAPH_ENGINE = True
LABELS = np.concatenate([data.TARGET, data.FEATURES["age"] / 5.0 - 1.0],
                        axis=1).astype(np.float32)
_, eval_input_fn, predict_input_fn = data.input_fns(LABELS)
reset = data.reset
observations = data.observations


def train_input_fn():
  return tf.data.Dataset.from_tensors((data.FEATURES, LABELS)).repeat()


def build_estimator(tf_module, model_dir):
  return tf_module.estimator.BoostedTreesRegressor(
      feature_columns=data.columns(tf_module.feature_column),
      n_batches_per_layer=1, model_dir=model_dir, label_dimension=2,
      n_trees=2, max_depth=2, learning_rate=0.3, l2_regularization=0.1,
      quantile_sketch_epsilon=0.2, train_in_memory=True,
      config=data.config(tf_module))


def run_training(tf_module, estimator):
  del tf_module
  data.run_training(estimator, train_input_fn)
