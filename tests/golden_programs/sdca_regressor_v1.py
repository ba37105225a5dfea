"""tf.compat.v1.estimator.LinearRegressor trained by
tf.compat.v1.estimator.experimental.LinearSDCA: weights partitioned in 2,
the example state table in 2 shards, adaptive sampling."""

from tests.golden_programs import _sdca_data as data

TRAIN_STEPS = 60
# SDCA trains with TF1 graph state (a hash table): the graph engine.
TRAINS_ON_GRAPH_ENGINE = True
# The example state table is compared by shape only (its buckets' order is
# the hash table's own).
VALUES_LEFT_OUT = ("ShardedMutableHashTable",)
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.TARGET)


def build_estimator(tf, model_dir):
  optimizer = tf.compat.v1.estimator.experimental.LinearSDCA(
      example_id_column="example_id", num_table_shards=2, adaptive=True,
      symmetric_l2_regularization=1.5)
  return tf.compat.v1.estimator.LinearRegressor(
      feature_columns=data.columns(tf.feature_column), model_dir=model_dir,
      weight_column="w", optimizer=optimizer,
      partitioner=tf.compat.v1.fixed_size_partitioner(2),
      config=data.config())
