"""tf.estimator.experimental.RNNEstimator: a RegressionHead, two stacked
SimpleRNN cells from rnn_cell_fn, a context column, SGD by name."""

import tensorflow as tf

from tests.golden_programs import _rnn_data as data

TRAIN_STEPS = data.TRAIN_STEPS
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    tf, data.REAL)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.sequence_columns(tf) + data.context_columns(tf))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name

  def rnn_cell_fn():
    return tf.keras.layers.StackedRNNCells(
        [tf.keras.layers.SimpleRNNCell(4), tf.keras.layers.SimpleRNNCell(3)])

  return tf.estimator.experimental.RNNEstimator(
      head=tf.estimator.RegressionHead(),
      sequence_feature_columns=data.sequence_columns(tf),
      context_feature_columns=data.context_columns(tf),
      rnn_cell_fn=rnn_cell_fn, model_dir=model_dir, optimizer="SGD",
      config=tf.estimator.RunConfig(tf_random_seed=5))
