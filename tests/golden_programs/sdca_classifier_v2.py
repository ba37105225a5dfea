"""tf.estimator.LinearClassifier trained by tf.estimator.experimental.LinearSDCA:
binary labels, weight column, L1 and L2, every categorical kind."""

from tests.golden_programs import _sdca_data as data

TRAIN_STEPS = 60
# SDCA trains with TF1 graph state (a hash table): the graph engine.
TRAINS_ON_GRAPH_ENGINE = True
# The example state table is compared by shape only (its buckets' order is
# the hash table's own).
VALUES_LEFT_OUT = ("ShardedMutableHashTable",)
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.BINARY)


def build_estimator(tf, model_dir):
  optimizer = tf.estimator.experimental.LinearSDCA(
      example_id_column="example_id", symmetric_l1_regularization=0.05,
      symmetric_l2_regularization=2.0)
  return tf.estimator.LinearClassifier(
      feature_columns=data.columns(tf.feature_column), model_dir=model_dir,
      weight_column="w", optimizer=optimizer, config=data.config())
