"""tf.compat.v1.estimator.LinearRegressor: label_dimension 2, weight column,
sparse_combiner 'mean', the larger weights partitioned in up to 3, default
v1 Ftrl."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
# The v1 linear model's partitioned weights train on the graph engine only.
TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.TARGET)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.compat.v1.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.LinearRegressor(
      feature_columns=data.columns(tf.compat.v1.feature_column),
      model_dir=model_dir, label_dimension=2, weight_column="w",
      sparse_combiner="mean",
      partitioner=tf.compat.v1.min_max_variable_partitioner(
          max_partitions=3, min_slice_size=64),
      config=data.config())
