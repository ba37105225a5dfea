"""LogisticRegressionHead on targets in [0, 1], weight column, named,
trained through train_op_fn."""

import tensorflow as tf

from tests.golden_programs import _heads
from tests.golden_programs._heads import (  # pylint: disable=unused-import
    CONFIG, PARAMS, TRAIN_STEPS, serving_input_receiver_fn, serving_inputs)

LABELS = 1 / (1 + (2.0 ** -_heads.SCORES[:, 1:2]))


def model_fn(features, labels, mode, params):
  del params
  head = tf.estimator.LogisticRegressionHead(weight_column="w",
                                             name="rate")
  logits = _heads.logits_of(features, head.logits_dimension)
  return _heads.v1_spec(head, features, labels, mode, logits)


train_input_fn, eval_input_fn, predict_input_fn = _heads.input_fns(
    LABELS.astype("float32"), {"w": _heads.WEIGHTS})
