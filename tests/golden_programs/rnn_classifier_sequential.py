"""tf.estimator.experimental.RNNClassifier with return_sequences: a class
per step (three classes), a GRU layer, a Keras legacy optimizer instance."""

import tensorflow as tf

from tests.golden_programs import _rnn_data as data

TRAIN_STEPS = data.TRAIN_STEPS
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    tf, data.STEP_LABELS)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.sequence_columns(tf))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.experimental.RNNClassifier(
      sequence_feature_columns=data.sequence_columns(tf), units=4,
      cell_type="gru", return_sequences=True, n_classes=3,
      model_dir=model_dir,
      optimizer=tf.keras.optimizers.legacy.Adam(learning_rate=0.05),
      config=tf.estimator.RunConfig(tf_random_seed=4))
