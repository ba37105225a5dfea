"""tf.estimator.DNNLinearCombinedEstimator (v2) with a BinaryClassHead (label
vocabulary, weight column): a Keras Ftrl instance for the linear part, an
Adagrad callable for the DNN part, the sqrtn sparse combiner."""

import tensorflow as tf

from tests.golden_programs import _canned_data as data

TRAIN_STEPS = data.TRAIN_STEPS
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    tf, data.BINARY)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.dense_columns(tf) + data.sparse_columns(tf))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.estimator.DNNLinearCombinedEstimator(
      head=tf.estimator.BinaryClassHead(
          weight_column="w", label_vocabulary=["no", "yes"]),
      model_dir=model_dir, linear_feature_columns=data.sparse_columns(tf),
      linear_optimizer=tf.keras.optimizers.legacy.Ftrl(learning_rate=0.05),
      dnn_feature_columns=data.dense_columns(tf),
      dnn_optimizer=lambda: tf.keras.optimizers.legacy.Adagrad(0.05),
      dnn_hidden_units=[6, 3], linear_sparse_combiner="sqrtn",
      config=tf.estimator.RunConfig(tf_random_seed=6,
                                    save_checkpoints_steps=100))
