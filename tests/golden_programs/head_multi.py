"""MultiHead of a MultiClassHead and a RegressionHead with head weights,
one logits Tensor split between them, labels as a dict by head name."""

import numpy as np
import tensorflow as tf

from tests.golden_programs import _heads
from tests.golden_programs._heads import (  # pylint: disable=unused-import
    CONFIG, PARAMS, TRAIN_STEPS, serving_input_receiver_fn, serving_inputs)

LABELS = {"kind": np.argmax(_heads.SCORES, axis=1).astype(np.int64),
          "size": _heads.SCORES[:, :1]}


def model_fn(features, labels, mode, params):
  del params
  head = tf.estimator.MultiHead(
      [tf.estimator.MultiClassHead(n_classes=3, name="kind"),
       tf.estimator.RegressionHead(name="size")], head_weights=[1.0, 0.5])
  logits = _heads.logits_of(features, head.logits_dimension)
  return _heads.keras_spec(head, features, labels, mode, logits)


train_input_fn, eval_input_fn, predict_input_fn = _heads.input_fns(LABELS)
