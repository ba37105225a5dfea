"""tf.compat.v1.estimator.DNNRegressor: a weight column, batch norm, a
tf.compat.v1.train optimizer instance, v1 feature columns."""

import tensorflow as tf

from tests.golden_programs import _canned_data as data

TRAIN_STEPS = data.TRAIN_STEPS
# TF1 optimizers on partitioned variables: training needs the graph engine.
TRAINS_ON_GRAPH_ENGINE = True
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(tf, data.REAL)
serving_input_receiver_fn = data.serving_input_receiver_fn_for(
    tf, data.dense_columns(tf, v1=True))
serving_inputs = data.serving_inputs


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.DNNRegressor(
      hidden_units=[8, 4], feature_columns=data.dense_columns(tf, v1=True),
      model_dir=model_dir, weight_column="w", batch_norm=True,
      optimizer=lambda: tf.compat.v1.train.AdagradOptimizer(0.1),
      config=tf.estimator.RunConfig(tf_random_seed=6,
                                    save_checkpoints_steps=100))
