"""MultiClassHead (3 classes, integer labels, unnamed) in a custom model_fn,
trained through train_op_fn with a tf.compat.v1.train optimizer."""

import numpy as np
import tensorflow as tf

from tests.golden_programs import _heads
from tests.golden_programs._heads import (  # pylint: disable=unused-import
    CONFIG, PARAMS, TRAIN_STEPS, serving_input_receiver_fn, serving_inputs)

LABELS = np.argmax(_heads.SCORES, axis=1).astype(np.int64)


def model_fn(features, labels, mode, params):
  del params
  head = tf.estimator.MultiClassHead(n_classes=3)
  logits = _heads.logits_of(features, head.logits_dimension)
  return _heads.v1_spec(head, features, labels, mode, logits)


train_input_fn, eval_input_fn, predict_input_fn = _heads.input_fns(LABELS)
