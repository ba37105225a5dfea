"""tf.estimator.LinearClassifier (v2): 3 classes, integer labels, optimizer
given by name ('Adagrad'), sparse_combiner 'sqrtn'."""

import tensorflow as tf

from tests.golden_programs import _canned_linear_data as data

TRAIN_STEPS = 40
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    data.MULTI_IDS)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf.feature_column)
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.LinearClassifier(
      feature_columns=data.columns(tf.feature_column), model_dir=model_dir,
      n_classes=3, optimizer="Adagrad", sparse_combiner="sqrtn",
      config=data.config())
