"""tf.estimator.BoostedTreesClassifier (tensorflow-estimator 2.8) on
bucketized and indicator columns only (no quantile sketch): bias centering,
a layer per epoch, three trees of depth 2, and its explanations."""

from tests.golden_programs import _boosted_trees_data as data

TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.BINARY)
reset = data.reset
observations = data.observations


def build_estimator(tf, model_dir):
  return tf.estimator.BoostedTreesClassifier(
      feature_columns=data.bucketized_columns(tf.feature_column),
      n_batches_per_layer=4, model_dir=model_dir, n_trees=3, max_depth=2,
      learning_rate=0.3, l2_regularization=0.01, center_bias=True,
      config=data.config(tf))


def run_training(tf, estimator):
  del tf
  data.run_training(estimator, train_input_fn, predict_input_fn)
