"""tf.estimator.BoostedTreesClassifier (tensorflow-estimator 2.8): binary,
bucketized + quantile-bucketized numeric + indicator columns, bias
centering, a layer per epoch (4 batches: bias centering converges only when
each of its steps sees the same data), three trees of depth 2, and
experimental_predict_with_explanations (which needs center_bias)."""

from tests.golden_programs import _boosted_trees_data as data

TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.BINARY)
reset = data.reset
observations = data.observations


def build_estimator(tf, model_dir):
  return tf.estimator.BoostedTreesClassifier(
      feature_columns=data.columns(tf.feature_column), n_batches_per_layer=4,
      model_dir=model_dir, n_trees=3, max_depth=2, learning_rate=0.3,
      l2_regularization=0.01, center_bias=True, quantile_sketch_epsilon=0.1,
      config=data.config(tf))


def run_training(tf, estimator):
  del tf
  data.run_training(estimator, train_input_fn, predict_input_fn)
