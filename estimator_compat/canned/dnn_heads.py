"""The heads the canned classifiers and regressors build, v1 and v2.

The v2 estimators use the `tf.estimator` Heads (head_utils); the v1 ones the
TF1 heads of TensorFlow 2.15's `canned/head.py` (tf1_heads: SUM loss
reduction by default, `tf.compat.v1.metrics`).
"""

from typing import Any, Optional, Sequence

import tensorflow as tf

from estimator_compat.head import head_utils
from estimator_compat.head import regression_head
from estimator_compat.head import tf1_heads

SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
V1_SUM = tf.compat.v1.losses.Reduction.SUM


def classifier_head_v2(n_classes: int, weight_column: Any,
                       label_vocabulary: Optional[Sequence[str]],
                       loss_reduction: str) -> Any:
  """BinaryClassHead for 2 classes, MultiClassHead for more."""
  return head_utils.binary_or_multi_class_head(
      n_classes, weight_column=weight_column,
      label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)


def regression_head_v2(label_dimension: int, weight_column: Any,
                       loss_reduction: str) -> Any:
  return regression_head.RegressionHead(
      label_dimension=label_dimension, weight_column=weight_column,
      loss_reduction=loss_reduction)


def classifier_head_v1(n_classes: int, weight_column: Any,
                       label_vocabulary: Optional[Sequence[str]],
                       loss_reduction: str) -> Any:
  """The TF1 binary (sigmoid) or multi-class (softmax) head."""
  return tf1_heads.binary_or_multi_class_head(
      n_classes, weight_column=weight_column,
      label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)


def regression_head_v1(label_dimension: int, weight_column: Any,
                       loss_reduction: str) -> Any:
  return tf1_heads.regression_head(
      weight_column=weight_column, label_dimension=label_dimension,
      loss_reduction=loss_reduction)
