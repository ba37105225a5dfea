"""tf.compat.v1.estimator.LinearClassifier: binary, label vocabulary,
unpartitioned, a v1 optimizer from a callable."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
# The v1 linear model's partitioned weights train on the graph engine only.
TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.BINARY)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.compat.v1.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.LinearClassifier(
      feature_columns=data.columns(tf.compat.v1.feature_column),
      model_dir=model_dir, label_vocabulary=["no", "yes"],
      optimizer=lambda: tf.compat.v1.train.AdagradOptimizer(0.1),
      config=data.config())
