"""tf.compat.v1.estimator.DNNLinearCombinedEstimator with a public
MultiClassHead (label vocabulary, weight column), named TF1 optimizers,
partitioned variables, v1 feature columns. TF 2.15's v1 class passes the head
a train_op_fn, so a v2 head works there."""

import tensorflow as tf

from tests.golden_programs import _canned_data as data

TRAIN_STEPS = data.TRAIN_STEPS
# TF1 optimizers on partitioned variables: training needs the graph engine.
TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(tf, data.THREE)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.dense_columns(tf, v1=True) + data.sparse_columns(tf, v1=True))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.DNNLinearCombinedEstimator(
      head=tf.estimator.MultiClassHead(
          n_classes=3, weight_column="w",
          label_vocabulary=["low", "mid", "high"]),
      model_dir=model_dir,
      linear_feature_columns=data.sparse_columns(tf, v1=True),
      linear_optimizer="Ftrl",
      dnn_feature_columns=data.dense_columns(tf, v1=True),
      dnn_optimizer="Adagrad", dnn_hidden_units=[6, 3],
      config=tf.estimator.RunConfig(tf_random_seed=10,
                                    save_checkpoints_steps=100))
