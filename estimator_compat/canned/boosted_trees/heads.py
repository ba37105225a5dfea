"""The heads of TF 2.8's BoostedTrees estimators: TF 2.8's TF1 heads with
the mean over the batch as loss (SUM_OVER_BATCH_SIZE), and for a plain
binary classifier the closed-form logistic gradient and hessian."""

from typing import Callable, Optional, Tuple

import tensorflow as tf

from estimator_compat.head import tf1_heads

_MEAN = tf.compat.v1.losses.Reduction.SUM_OVER_BATCH_SIZE


def classification_head(n_classes: int, weight_column=None,
                        label_vocabulary=None
                        ) -> Tuple[object, Optional[Callable]]:
  """The classifier's head and its closed-form gradients (or None).

  Raises:
    ValueError: n_classes other than 2 (multi-class trees are not ported).
  """
  if n_classes != 2:
    raise ValueError(
        f"n_classes={n_classes}: only binary BoostedTreesClassifier "
        "(n_classes=2) is ported. Fix: pass n_classes=2.")
  head = tf1_heads.binary_or_multi_class_head(
      n_classes, weight_column=weight_column,
      label_vocabulary=label_vocabulary, loss_reduction=_MEAN)
  if weight_column is not None or label_vocabulary is not None:
    return head, None
  return head, _logistic_gradients_and_hessians


def _logistic_gradients_and_hessians(logits, labels):
  """d/dlogit and d2/dlogit2 of the batch-mean logistic loss."""
  probabilities = tf.math.reciprocal(tf.math.exp(-logits) + 1.0)
  scale = tf.math.reciprocal(
      tf.cast(tf.size(probabilities), tf.float32))
  labels = tf.reshape(tf.cast(labels, tf.float32), tf.shape(logits))
  gradients = (probabilities - labels) * scale
  hessians = probabilities * (1.0 - probabilities) * scale
  return gradients, hessians


def regression_head(label_dimension: int, weight_column=None):
  """The regressor's head (mean squared error over the batch).

  Raises:
    ValueError: label_dimension other than 1 (multi-dimensional trees are
      not ported).
  """
  if label_dimension != 1:
    raise ValueError(
        f"label_dimension={label_dimension}: only one-dimensional "
        "BoostedTreesRegressor labels are ported. Fix: pass "
        "label_dimension=1.")
  return tf1_heads.regression_head(weight_column=weight_column,
                                   label_dimension=label_dimension,
                                   loss_reduction=_MEAN)
