"""tf.estimator.DNNEstimator (v2) with a MultiClassHead (label vocabulary,
weight column), dropout-free relu layers, a Keras Adagrad instance."""

import tensorflow as tf

from tests.golden_programs import _canned_data as data

TRAIN_STEPS = data.TRAIN_STEPS
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(tf, data.THREE)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.dense_columns(tf))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.DNNEstimator(
      head=tf.estimator.MultiClassHead(
          n_classes=3, weight_column="w",
          label_vocabulary=["low", "mid", "high"]),
      hidden_units=[8, 4], feature_columns=data.dense_columns(tf),
      model_dir=model_dir,
      optimizer=tf.keras.optimizers.legacy.Adagrad(learning_rate=0.1),
      config=tf.estimator.RunConfig(tf_random_seed=5,
                                    save_checkpoints_steps=100))
