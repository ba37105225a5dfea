"""The heads of TF 2.8's BoostedTrees estimators: TF 2.8's TF1 heads with
the mean over the batch as loss (SUM_OVER_BATCH_SIZE), for a plain binary
classifier the closed-form logistic gradient and hessian, and for more
classes 2.8's maximum entropy loss."""

from typing import Callable, Optional, Tuple

import tensorflow as tf

from estimator_compat.head import tf1_heads

_MEAN = tf.compat.v1.losses.Reduction.SUM_OVER_BATCH_SIZE


def classification_head(n_classes: int, weight_column=None,
                        label_vocabulary=None
                        ) -> Tuple[object, Optional[Callable]]:
  """The classifier's head and its closed-form gradients (or None).

  Binary: the logistic head, loss averaged over the batch, and (without
  weights or vocabulary) the closed-form gradients. Multi-class: 2.8's
  maximum entropy loss summed over the examples of non-zero weight.
  """
  if n_classes > 2:

    def loss_fn(labels, logits):
      if weight_column is not None:
        _refuse_weighted_maxent(weight_column)
      return maxent_loss(labels, logits, n_classes)

    return tf1_heads.TF1MultiClassHead(
        n_classes, weight_column=weight_column,
        label_vocabulary=label_vocabulary,
        loss_reduction=tf.compat.v1.losses.Reduction.SUM_OVER_NONZERO_WEIGHTS,
        loss_fn=loss_fn), None
  head = tf1_heads.binary_or_multi_class_head(
      n_classes, weight_column=weight_column,
      label_vocabulary=label_vocabulary, loss_reduction=_MEAN)
  if weight_column is not None or label_vocabulary is not None:
    return head, None
  return head, _logistic_gradients_and_hessians


def _refuse_weighted_maxent(weight_column) -> None:
  """2.8's multi-class loss multiplied the loss by the weight_column
  argument itself (a name or a column), which failed when the graph was
  built."""
  kind = type(weight_column).__name__
  raise TypeError(
      "Expected float32 passed to parameter 'y' of op 'Mul', got "
      f"{weight_column!r} of type '{kind}' instead. Error: Expected float32, "
      f"but got {weight_column} of type '{kind}'. (TF 2.8's multi-class "
      "BoostedTrees loss multiplied the loss by weight_column itself.) Fix: "
      "drop weight_column with n_classes > 2.")


def maxent_loss(labels, logits, n_classes: int, eps: float = 1e-15):
  """Per example `-log p(label)` (`[batch, 1]`), p the softmax of the
  logits with eps added to its normalizer and clipped to [eps, 1 - eps],
  as 2.8's multi-class BoostedTrees loss computed it."""
  labels = tf.cast(labels, tf.int64)
  if len(labels.shape) != 2:
    labels = tf.expand_dims(labels, 1)
  one_hot = tf.cast(tf.reduce_sum(tf.one_hot(labels, depth=n_classes),
                                  axis=[1]), tf.float32)
  exps = tf.math.exp(logits)
  probabilities = tf.math.divide(
      exps, tf.math.add(tf.reduce_sum(exps, 1, keepdims=True), eps))
  label_probability = tf.reduce_sum(one_hot * probabilities, 1)
  low = tf.zeros_like(label_probability, dtype=logits.dtype) + eps
  high = tf.ones_like(label_probability, dtype=logits.dtype) - eps
  label_probability = tf.compat.v1.where(label_probability >= eps,
                                         label_probability, low)
  label_probability = tf.compat.v1.where(label_probability <= 1 - eps,
                                         label_probability, high)
  return tf.expand_dims(-tf.math.log(label_probability), 1)


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
  """The regressor's head (mean squared error over the batch)."""
  return tf1_heads.regression_head(weight_column=weight_column,
                                   label_dimension=label_dimension,
                                   loss_reduction=_MEAN)
