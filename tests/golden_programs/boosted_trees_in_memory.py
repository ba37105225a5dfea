"""tf.estimator.BoostedTreesClassifier (tensorflow-estimator 2.8) with
train_in_memory=True: the whole data set as one batch every step, so the
quantile sketch, bias centering and each layer take one step; the
transformed features and the training states are cached in variables."""

import tensorflow as tf

from tests.golden_programs import _boosted_trees_data as data

TRAINS_ON_GRAPH_ENGINE = True
_, eval_input_fn, predict_input_fn = data.input_fns(data.BINARY)
reset = data.reset
observations = data.observations


def train_input_fn():
  return tf.data.Dataset.from_tensors(
      (data.FEATURES, data.BINARY)).repeat()


def build_estimator(tf_module, model_dir):
  return tf_module.estimator.BoostedTreesClassifier(
      feature_columns=data.columns(tf_module.feature_column),
      n_batches_per_layer=1, model_dir=model_dir, n_trees=2, max_depth=2,
      learning_rate=0.3, l2_regularization=0.01, center_bias=True,
      quantile_sketch_epsilon=0.1, train_in_memory=True,
      config=data.config(tf_module))


def run_training(tf_module, estimator):
  del tf_module
  data.run_training(estimator, train_input_fn, predict_input_fn)
