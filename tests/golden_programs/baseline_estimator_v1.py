"""tf.compat.v1.estimator.BaselineEstimator with a public RegressionHead
(label dimension 2, weight column) and a TF1 optimizer instance: TF 2.15's
v1 class passes the head a train_op_fn, so a v2 head works there."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(data.TARGET)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.compat.v1.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.BaselineEstimator(
      head=tf.estimator.RegressionHead(label_dimension=2, weight_column="w"),
      model_dir=model_dir,
      optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.05),
      config=data.config())
