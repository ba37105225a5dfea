"""tf.compat.v1.estimator.BaselineClassifier: binary, label vocabulary,
weight column, the default optimizer (v1 Ftrl)."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.BINARY)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.compat.v1.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.BaselineClassifier(
      model_dir=model_dir, weight_column="w",
      label_vocabulary=["no", "yes"], config=data.config())
