"""tf.estimator.DNNClassifier: 3 classes with a label vocabulary, a weight
column, batch norm, every kind of feature column, the Keras Adagrad default."""

import tensorflow as tf

from tests.golden_programs import _canned_data as data

TRAIN_STEPS = data.TRAIN_STEPS
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(tf, data.THREE)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.dense_columns(tf))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.DNNClassifier(
      hidden_units=[8, 4], feature_columns=data.dense_columns(tf),
      model_dir=model_dir, n_classes=3, weight_column="w",
      label_vocabulary=["low", "mid", "high"],
      optimizer=tf.keras.optimizers.legacy.Adagrad(learning_rate=0.1),
      batch_norm=True,
      config=tf.estimator.RunConfig(tf_random_seed=3,
                                    save_checkpoints_steps=100))
