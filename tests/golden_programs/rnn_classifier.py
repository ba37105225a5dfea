"""tf.estimator.experimental.RNNClassifier: a label vocabulary, a weight
column, a context column, one LSTM layer, the named optimizer (Adagrad 0.05,
clip norm 5)."""

import tensorflow as tf

from tests.golden_programs import _rnn_data as data

TRAIN_STEPS = data.TRAIN_STEPS
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    tf, data.BINARY)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.sequence_columns(tf) + data.context_columns(tf))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.experimental.RNNClassifier(
      sequence_feature_columns=data.sequence_columns(tf),
      context_feature_columns=data.context_columns(tf),
      units=[5], cell_type="lstm", model_dir=model_dir, weight_column="w",
      label_vocabulary=["no", "yes"],
      config=tf.estimator.RunConfig(tf_random_seed=3))
