"""The heads the canned classifiers and regressors build, v1 and v2.

The v2 estimators use the `tf.estimator` Heads; the v1 ones the TF1 heads of
TensorFlow 2.15's `canned/head.py` (a different loss reduction default and
different metric code), from estimator_compat.head's TF1 factory.
"""

from typing import Any, Optional, Sequence

import tensorflow as tf

from estimator_compat import head as head_lib

SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
V1_SUM = tf.compat.v1.losses.Reduction.SUM


def classifier_head_v2(n_classes: int, weight_column: Any,
                       label_vocabulary: Optional[Sequence[str]],
                       loss_reduction: str) -> Any:
  """BinaryClassHead for 2 classes, MultiClassHead for more."""
  if n_classes == 2:
    return head_lib.BinaryClassHead(
        weight_column=weight_column, label_vocabulary=label_vocabulary,
        loss_reduction=loss_reduction)
  return head_lib.MultiClassHead(
      n_classes, weight_column=weight_column,
      label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)


def regression_head_v2(label_dimension: int, weight_column: Any,
                       loss_reduction: str) -> Any:
  return head_lib.RegressionHead(
      label_dimension=label_dimension, weight_column=weight_column,
      loss_reduction=loss_reduction)


def classifier_head_v1(n_classes: int, weight_column: Any,
                       label_vocabulary: Optional[Sequence[str]],
                       loss_reduction: str) -> Any:
  """The TF1 binary (sigmoid) or multi-class (softmax) head."""
  del n_classes, weight_column, label_vocabulary, loss_reduction
  raise _no_v1_heads()


def regression_head_v1(label_dimension: int, weight_column: Any,
                       loss_reduction: str) -> Any:
  del label_dimension, weight_column, loss_reduction
  raise _no_v1_heads()


def _no_v1_heads() -> NotImplementedError:
  return NotImplementedError(
      "The tf.compat.v1.estimator canned classifiers and regressors need "
      "TF 2.15's TF1 heads, which estimator_compat does not have yet. Fix: "
      "use the tf.estimator (v2) class of the same name.")
