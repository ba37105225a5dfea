"""tf.estimator.LinearRegressor (v2): label_dimension 2, weight column, a
Keras optimizer instance."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.TARGET)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.LinearRegressor(
      feature_columns=data.columns(tf.feature_column), model_dir=model_dir,
      label_dimension=2, weight_column="w",
      optimizer=tf.keras.optimizers.legacy.Adam(learning_rate=0.05),
      config=data.config())
