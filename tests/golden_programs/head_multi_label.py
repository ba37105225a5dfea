"""MultiLabelHead (3 labels) in a custom model_fn: weight column,
thresholds, class-based metrics by name, Keras legacy optimizer."""

import tensorflow as tf

from tests.golden_programs import _heads
from tests.golden_programs._heads import (  # pylint: disable=unused-import
    CONFIG, PARAMS, TRAIN_STEPS, serving_input_receiver_fn, serving_inputs)

LABELS = (_heads.SCORES > 0).astype("int64")


def model_fn(features, labels, mode, params):
  del params
  head = tf.estimator.MultiLabelHead(
      n_classes=3, weight_column="w", thresholds=[0.5],
      label_vocabulary=["red", "green", "blue"],
      classes_for_class_based_metrics=["red", "blue"])
  logits = _heads.logits_of(features, head.logits_dimension)
  return _heads.keras_spec(head, features, labels, mode, logits)


train_input_fn, eval_input_fn, predict_input_fn = _heads.input_fns(
    LABELS, {"w": _heads.WEIGHTS})
