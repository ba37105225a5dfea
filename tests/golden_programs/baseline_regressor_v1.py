"""tf.compat.v1.estimator.BaselineRegressor: label_dimension 2, weight
column, a v1 optimizer instance."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.TARGET)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.compat.v1.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.BaselineRegressor(
      model_dir=model_dir, label_dimension=2, weight_column="w",
      optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.005),
      config=data.config())
