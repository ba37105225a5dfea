"""RegressionHead with label_dimension=2, a weight column and
regularization losses, Keras legacy optimizer."""

import tensorflow as tf

from tests.golden_programs import _heads
from tests.golden_programs._heads import (  # pylint: disable=unused-import
    CONFIG, PARAMS, TRAIN_STEPS, serving_input_receiver_fn, serving_inputs)

LABELS = _heads.SCORES[:, :2]


def model_fn(features, labels, mode, params):
  del params
  head = tf.estimator.RegressionHead(label_dimension=2, weight_column="w")
  logits = _heads.logits_of(features, head.logits_dimension)
  regularization = [0.01 * tf.reduce_sum(tf.square(v))
                    for v in tf.compat.v1.trainable_variables()
                    if "kernel" in v.name]
  optimizer = tf.keras.optimizers.legacy.Adagrad(0.1)
  if mode == tf.estimator.ModeKeys.TRAIN:
    optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
  return head.create_estimator_spec(
      features=features, mode=mode, logits=logits, labels=labels,
      optimizer=optimizer,
      trainable_variables=tf.compat.v1.trainable_variables(),
      regularization_losses=regularization)


train_input_fn, eval_input_fn, predict_input_fn = _heads.input_fns(
    LABELS, {"w": _heads.WEIGHTS})
