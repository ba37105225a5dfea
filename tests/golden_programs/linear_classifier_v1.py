"""tf.compat.v1.estimator.LinearClassifier: 3 classes, label vocabulary,
weight column, v1 columns, the larger weights partitioned in 2
(part_0/part_1; a 3-unit bias split in 2 breaks the real Estimator's bias
histogram), the default optimizer (v1 Ftrl)."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
# The v1 linear model's partitioned weights train on the graph engine only.
TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.MULTI)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.compat.v1.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.LinearClassifier(
      feature_columns=data.columns(tf.compat.v1.feature_column),
      model_dir=model_dir, n_classes=3, weight_column="w",
      label_vocabulary=["low", "mid", "high"],
      partitioner=tf.compat.v1.min_max_variable_partitioner(
          max_partitions=2, min_slice_size=32),
      config=data.config())
