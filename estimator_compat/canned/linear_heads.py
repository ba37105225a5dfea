"""The heads the Linear and Baseline estimators build from their arguments.

v2 (`tf.estimator.*`): `BinaryClassHead` for 2 classes, `MultiClassHead`
above, `RegressionHead` (head/head_utils.py). v1 (`tf.compat.v1.estimator.*`):
the TF1 heads of TensorFlow 2.15's `canned/head.py` (head/tf1_heads.py).
"""

from typing import Optional, Sequence

from estimator_compat.head import head_utils
from estimator_compat.head import regression_head
from estimator_compat.head import tf1_heads


def classification_head_v2(n_classes: int, weight_column=None,
                           label_vocabulary: Optional[Sequence[str]] = None,
                           loss_reduction: str = "sum_over_batch_size"):
  """`BinaryClassHead` for 2 classes, `MultiClassHead` for more."""
  return head_utils.binary_or_multi_class_head(
      n_classes, weight_column=weight_column,
      label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)


def regression_head_v2(label_dimension: int, weight_column=None,
                       loss_reduction: str = "sum_over_batch_size"):
  return regression_head.RegressionHead(
      label_dimension=label_dimension, weight_column=weight_column,
      loss_reduction=loss_reduction)


def classification_head_v1(n_classes: int, weight_column=None,
                           label_vocabulary: Optional[Sequence[str]] = None,
                           loss_reduction: str = tf1_heads.SUM):
  """The TF1 binary (2 classes) or multi-class head."""
  return tf1_heads.binary_or_multi_class_head(
      n_classes, weight_column=weight_column,
      label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)


def regression_head_v1(label_dimension: int, weight_column=None,
                       loss_reduction: str = tf1_heads.SUM):
  """The TF1 regression head (mean squared error)."""
  return tf1_heads.regression_head(
      weight_column=weight_column, label_dimension=label_dimension,
      loss_reduction=loss_reduction)
