"""tf.compat.v1.estimator.DNNClassifier: binary with a label vocabulary, a
weight column, v1 feature columns, the default Adagrad (0.05), SUM loss."""

import tensorflow as tf

from tests.golden_programs import _canned_data as data

TRAIN_STEPS = data.TRAIN_STEPS
# TF1 optimizers on partitioned variables: training needs the graph engine.
TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(
    tf, data.BINARY)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.dense_columns(tf, v1=True))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.DNNClassifier(
      hidden_units=[8, 4], feature_columns=data.dense_columns(tf, v1=True),
      model_dir=model_dir, weight_column="w", label_vocabulary=["no", "yes"],
      activation_fn=tf.nn.tanh,
      config=tf.estimator.RunConfig(tf_random_seed=4,
                                    save_checkpoints_steps=100))
