"""tf.estimator.BoostedTreesRegressor (tensorflow-estimator 2.8) on
bucketized and indicator columns only (no quantile sketch): L1/L2,
pre-pruning with tree_complexity, min_node_weight, no bias centering, two
batches per layer, four trees of depth 2."""

from tests.golden_programs import _boosted_trees_data as data

TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.TARGET)
reset = data.reset
observations = data.observations


def build_estimator(tf, model_dir):
  return tf.estimator.BoostedTreesRegressor(
      feature_columns=data.bucketized_columns(tf.feature_column),
      n_batches_per_layer=2, model_dir=model_dir, n_trees=4, max_depth=2,
      learning_rate=0.2, l1_regularization=0.01, l2_regularization=0.1,
      tree_complexity=0.001, min_node_weight=0.01, pruning_mode="pre",
      config=data.config(tf))


def run_training(tf, estimator):
  del tf
  data.run_training(estimator, train_input_fn)
