"""tf.estimator.DNNLinearCombinedClassifier (wide & deep): sparse columns in
the linear part, dense ones in the DNN, default optimizers (Ftrl 0.005,
Adagrad 0.001), a weight column and a binary label vocabulary."""

import tensorflow as tf

from tests.golden_programs import _canned_data as data

TRAIN_STEPS = data.TRAIN_STEPS
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    tf, data.BINARY)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.dense_columns(tf) + data.sparse_columns(tf))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.DNNLinearCombinedClassifier(
      model_dir=model_dir, linear_feature_columns=data.sparse_columns(tf),
      dnn_feature_columns=data.dense_columns(tf), dnn_hidden_units=[6, 3],
      weight_column="w", label_vocabulary=["no", "yes"],
      config=tf.estimator.RunConfig(tf_random_seed=7,
                                    save_checkpoints_steps=100))
