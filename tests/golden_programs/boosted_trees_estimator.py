"""tf.estimator.BoostedTreesEstimator (tensorflow-estimator 2.8) with a
head of tf.estimator's own: the regressor's growth (two batches per layer,
L2) under RegressionHead's loss, on bucketized and indicator columns."""

from tests.golden_programs import _boosted_trees_data as data

TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.TARGET)
reset = data.reset
observations = data.observations


def build_estimator(tf, model_dir):
  return tf.estimator.BoostedTreesEstimator(
      feature_columns=data.bucketized_columns(tf.feature_column),
      n_batches_per_layer=2, head=tf.estimator.RegressionHead(),
      model_dir=model_dir, n_trees=2, max_depth=2, learning_rate=0.3,
      l2_regularization=0.1, config=data.config(tf))


def run_training(tf, estimator):
  del tf
  data.run_training(estimator, train_input_fn)
