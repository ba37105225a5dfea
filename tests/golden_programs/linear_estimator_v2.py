"""tf.estimator.LinearEstimator (v2) with a RegressionHead and an optimizer
callable."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.TARGET)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.LinearEstimator(
      head=tf.estimator.RegressionHead(label_dimension=2, weight_column="w"),
      feature_columns=data.columns(tf.feature_column), model_dir=model_dir,
      optimizer=lambda: tf.keras.optimizers.legacy.Ftrl(learning_rate=0.1),
      config=data.config())
