"""BinaryClassHead in a custom model_fn: weight column, label vocabulary,
thresholds, a named head, a Keras legacy optimizer."""

import numpy as np
import tensorflow as tf

from tests.golden_programs import _heads
from tests.golden_programs._heads import (  # pylint: disable=unused-import
    CONFIG, PARAMS, TRAIN_STEPS, serving_input_receiver_fn, serving_inputs)

LABELS = np.where(_heads.SCORES[:, 0] > 0, "yes", "no").reshape(-1, 1)


def model_fn(features, labels, mode, params):
  del params
  head = tf.estimator.BinaryClassHead(
      weight_column="w", label_vocabulary=["no", "yes"],
      thresholds=[0.3, 0.7], name="answer")
  logits = _heads.logits_of(features, head.logits_dimension)
  return _heads.keras_spec(head, features, labels, mode, logits)


train_input_fn, eval_input_fn, predict_input_fn = _heads.input_fns(
    LABELS, {"w": _heads.WEIGHTS})
