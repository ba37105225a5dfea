"""tf.estimator.DNNRegressor: a weight column, a named optimizer with the
Keras default learning rate, every kind of feature column."""

import tensorflow as tf

from tests.golden_programs import _canned_data as data

TRAIN_STEPS = data.TRAIN_STEPS
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(tf, data.REAL)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.dense_columns(tf))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.DNNRegressor(
      hidden_units=[8, 4], feature_columns=data.dense_columns(tf),
      model_dir=model_dir, weight_column="w", optimizer="Adam",
      config=tf.estimator.RunConfig(tf_random_seed=5,
                                    save_checkpoints_steps=100))
