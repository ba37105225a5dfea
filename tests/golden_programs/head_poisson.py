"""PoissonRegressionHead on count labels, Keras legacy optimizer."""

import numpy as np
import tensorflow as tf

from tests.golden_programs import _heads
from tests.golden_programs._heads import (  # pylint: disable=unused-import
    CONFIG, PARAMS, TRAIN_STEPS, serving_input_receiver_fn, serving_inputs)

LABELS = np.round(np.exp(_heads.SCORES[:, :1] / 3)).astype(np.float32)


def model_fn(features, labels, mode, params):
  del params
  head = tf.estimator.PoissonRegressionHead()
  logits = _heads.logits_of(features, head.logits_dimension)
  return _heads.keras_spec(head, features, labels, mode, logits, 0.05)


train_input_fn, eval_input_fn, predict_input_fn = _heads.input_fns(LABELS)
