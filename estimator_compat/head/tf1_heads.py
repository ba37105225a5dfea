"""The heads of TF 2.15's TF1 canned estimators (`tf.compat.v1.estimator.*`).

TF 2.15's `tf.compat.v1.estimator.DNNClassifier` and friends did not use the
public v2 heads but private TF1 ones (canned/head.py). They predict, export
and check labels as the v2 heads do, but differ in:
- the default loss reduction: `tf.compat.v1.losses.Reduction.SUM`, and any
  `tf.compat.v1.losses.Reduction` but NONE is accepted, reduced by
  `tf.compat.v1.losses.compute_weighted_loss`;
- eval metrics computed with `tf.compat.v1.metrics` (tf1_metrics);
- training: `optimizer` is a `tf.compat.v1.train.Optimizer`, the train op
  `optimizer.minimize(loss, global_step=get_global_step())`, grouped with
  the graph's UPDATE_OPS collection;
- summaries: `loss`, plus `average_loss` (loss / sum of weights) when the
  reduction is SUM, and `regularization_loss`.

Each is a `tf1_head_base.TF1HeadBase` (TF 2.15's `_Head`). Factories for
the canned estimators, and under TF 2.15's private names for legacy programs
(api/module_paths.py registers them as `canned.head`):

  binary_or_multi_class_head(n_classes, weight_column=None,
                             label_vocabulary=None, loss_reduction=SUM)
  regression_head(weight_column=None, label_dimension=1,
                  loss_reduction=SUM, loss_fn=None, inverse_link_fn=None,
                  name=None)
  binary_class_head(weight_column=None, thresholds=None,
                    label_vocabulary=None, loss_reduction=SUM,
                    loss_fn=None, name=None)
  multi_class_head(n_classes, weight_column=None, label_vocabulary=None,
                   loss_reduction=SUM, loss_fn=None, name=None)

They return heads with `name`, `logits_dimension`,
`create_loss(features, mode, logits, labels) -> LossSpec` and
`create_estimator_spec(features, mode, logits, labels=None, optimizer=None,
train_op_fn=None, regularization_losses=None)`.
"""

import collections
from typing import Any, Optional, Sequence

import tensorflow as tf

from estimator_compat import mode_keys
from estimator_compat import spec as spec_lib
from estimator_compat.head import binary_class_head
from estimator_compat.head import keys as keys_lib
from estimator_compat.head import multi_class_head
from estimator_compat.head import regression_head
from estimator_compat.head import tf1_metrics
from estimator_compat.head.tf1_head_base import TF1HeadBase

ModeKeys = mode_keys.ModeKeys
SUM = tf.compat.v1.losses.Reduction.SUM
_K = keys_lib.MetricKeys
_P = keys_lib.PredictionKeys

LossSpec = collections.namedtuple(
    "LossSpec",
    ["training_loss", "unreduced_loss", "weights", "processed_labels"])


def _check_v1_loss_reduction(reduction: Any) -> None:
  if (reduction not in tf.compat.v1.losses.Reduction.all()
      or reduction == tf.compat.v1.losses.Reduction.NONE):
    raise ValueError(
        f"Invalid loss_reduction: {reduction}. Fix: pass a "
        "tf.compat.v1.losses.Reduction other than NONE, e.g. SUM.")


class _TF1Head:
  """What the TF1 heads add to a v2 head: see the module docstring.

  Mixed in before a v2 head class, which provides `predictions`,
  `_export_outputs`, `_processed_labels` and `_unweighted_loss_and_weights`.
  """

  def _check_loss_reduction(self, reduction: Any) -> None:
    _check_v1_loss_reduction(reduction)

  def create_loss(self, features, mode, logits, labels) -> LossSpec:
    """The reduced loss, unreduced loss, weights and processed labels."""
    del mode
    features = features or {}
    logits = tf.convert_to_tensor(logits)
    labels = self._processed_labels(logits, labels)
    unreduced, weights = self._unweighted_loss_and_weights(logits, labels,
                                                           features)
    training_loss = tf.compat.v1.losses.compute_weighted_loss(
        unreduced, weights=weights, reduction=self.loss_reduction)
    return LossSpec(training_loss, unreduced, weights, labels)

  def _tf1_metric_ops(self, loss_spec, predictions, regularization_loss):
    """The eval_metric_ops of this head; each concrete TF1 head defines it."""
    raise NotImplementedError(
        f"{type(self).__name__} must define _tf1_metric_ops (the TF1 heads "
        "are TF1BinaryClassHead, TF1MultiClassHead, TF1RegressionHead).")

  def create_estimator_spec(self, features, mode, logits, labels=None,
                            optimizer=None, train_op_fn=None,
                            regularization_losses=None):
    """The EstimatorSpec of a TF1 canned estimator's model_fn.

    Raises:
      ValueError: in TRAIN mode, neither or both of optimizer and
        train_op_fn.
    """
    with tf.compat.v1.name_scope(self.name, "head"):
      logits = tf.convert_to_tensor(logits)
      predictions = self.predictions(logits)
      if mode == ModeKeys.PREDICT:
        return spec_lib.EstimatorSpec(
            mode=ModeKeys.PREDICT, predictions=predictions,
            export_outputs=self._export_outputs(predictions))
      loss_spec = self.create_loss(features, mode, logits, labels)
      if regularization_losses:
        regularization_loss = tf.math.add_n(regularization_losses)
        loss = tf.math.add_n([loss_spec.training_loss, regularization_loss])
      else:
        regularization_loss = None
        loss = loss_spec.training_loss
      if mode == ModeKeys.EVAL:
        return spec_lib.EstimatorSpec(
            mode=ModeKeys.EVAL, predictions=predictions, loss=loss,
            eval_metric_ops=self._tf1_metric_ops(loss_spec, predictions,
                                                 regularization_loss))
      train_op = _train_op(optimizer, train_op_fn, loss)
      mean_loss = None
      if self.loss_reduction == SUM:
        mean_loss = loss_spec.training_loss / tf.math.reduce_sum(
            loss_spec.weights * tf.ones_like(loss_spec.unreduced_loss))
    with tf.compat.v1.name_scope(None):
      tf.compat.v1.summary.scalar(self._summary_key(_K.LOSS), loss)
      if mean_loss is not None:
        tf.compat.v1.summary.scalar(self._summary_key(_K.LOSS_MEAN),
                                    mean_loss)
      if regularization_loss is not None:
        tf.compat.v1.summary.scalar(
            self._summary_key(_K.LOSS_REGULARIZATION), regularization_loss)
    return spec_lib.EstimatorSpec(mode=ModeKeys.TRAIN,
                                  predictions=predictions, loss=loss,
                                  train_op=train_op)


def _train_op(optimizer, train_op_fn, loss):
  if optimizer is not None:
    if train_op_fn is not None:
      raise ValueError("train_op_fn and optimizer cannot both be set. Fix: "
                       "pass only one of them.")
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
  elif train_op_fn is not None:
    train_op = train_op_fn(loss)
  else:
    raise ValueError("train_op_fn and optimizer cannot both be None. Fix: "
                     "pass a tf.compat.v1.train optimizer or a train_op_fn.")
  update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
  return tf.group(train_op, *update_ops) if update_ops else train_op


class TF1BinaryClassHead(_TF1Head, binary_class_head.BinaryClassHead,
                         TF1HeadBase):
  """TF 2.15's TF1 binary logistic head (sigmoid cross entropy)."""

  def __init__(self, weight_column=None,
               thresholds: Optional[Sequence[float]] = None,
               label_vocabulary: Optional[Sequence[str]] = None,
               loss_reduction: str = SUM, loss_fn=None,
               name: Optional[str] = None):
    super().__init__(weight_column=weight_column, thresholds=thresholds,
                     label_vocabulary=label_vocabulary,
                     loss_reduction=loss_reduction, loss_fn=loss_fn,
                     name=name)

  def _tf1_metric_ops(self, loss_spec, predictions, regularization_loss):
    return tf1_metrics.binary(
        self._summary_key, loss_spec.processed_labels,
        predictions[_P.LOGISTIC], predictions[_P.CLASS_IDS],
        loss_spec.weights, loss_spec.unreduced_loss, regularization_loss,
        self._thresholds)


class TF1MultiClassHead(_TF1Head, multi_class_head.MultiClassHead,
                        TF1HeadBase):
  """TF 2.15's TF1 multi-class head (softmax cross entropy)."""

  def __init__(self, n_classes: int, weight_column=None,
               label_vocabulary: Optional[Sequence[str]] = None,
               loss_reduction: str = SUM, loss_fn=None,
               name: Optional[str] = None):
    super().__init__(n_classes, weight_column=weight_column,
                     label_vocabulary=label_vocabulary,
                     loss_reduction=loss_reduction, loss_fn=loss_fn,
                     name=name)

  def _tf1_metric_ops(self, loss_spec, predictions, regularization_loss):
    return tf1_metrics.multi_class(
        self._summary_key, loss_spec.processed_labels,
        predictions[_P.CLASS_IDS], loss_spec.weights,
        loss_spec.unreduced_loss, regularization_loss)


class TF1RegressionHead(_TF1Head, regression_head.RegressionHead,
                        TF1HeadBase):
  """TF 2.15's TF1 regression head (mean squared error)."""

  def __init__(self, label_dimension: int = 1, weight_column=None,
               loss_reduction: str = SUM, loss_fn=None, inverse_link_fn=None,
               name: Optional[str] = None):
    super().__init__(label_dimension=label_dimension,
                     weight_column=weight_column,
                     loss_reduction=loss_reduction, loss_fn=loss_fn,
                     inverse_link_fn=inverse_link_fn, name=name)

  def _tf1_metric_ops(self, loss_spec, predictions, regularization_loss):
    return tf1_metrics.regression(
        self._summary_key, predictions[_P.PREDICTIONS],
        loss_spec.processed_labels, loss_spec.weights,
        loss_spec.unreduced_loss, regularization_loss)


def binary_class_head(weight_column=None,
                      thresholds: Optional[Sequence[float]] = None,
                      label_vocabulary: Optional[Sequence[str]] = None,
                      loss_reduction: str = SUM, loss_fn=None,
                      name: Optional[str] = None) -> TF1BinaryClassHead:
  """The TF1 binary logistic head (sigmoid cross entropy)."""
  return TF1BinaryClassHead(weight_column=weight_column,
                            thresholds=thresholds,
                            label_vocabulary=label_vocabulary,
                            loss_reduction=loss_reduction, loss_fn=loss_fn,
                            name=name)


def multi_class_head(n_classes: int, weight_column=None,
                     label_vocabulary: Optional[Sequence[str]] = None,
                     loss_reduction: str = SUM, loss_fn=None,
                     name: Optional[str] = None) -> TF1MultiClassHead:
  """The TF1 multi-class head (softmax cross entropy).

  Raises:
    ValueError: n_classes is None or under 3, or another bad argument.
  """
  if n_classes is None:
    raise ValueError("n_classes cannot be None")
  return TF1MultiClassHead(n_classes, weight_column=weight_column,
                           label_vocabulary=label_vocabulary,
                           loss_reduction=loss_reduction, loss_fn=loss_fn,
                           name=name)


def binary_or_multi_class_head(n_classes: int, weight_column=None,
                               label_vocabulary: Optional[Sequence[str]] = None,
                               loss_reduction: str = SUM) -> TF1HeadBase:
  """The TF1 classifier head: binary for n_classes == 2, else multi-class."""
  if n_classes == 2:
    return binary_class_head(weight_column=weight_column,
                             label_vocabulary=label_vocabulary,
                             loss_reduction=loss_reduction)
  return multi_class_head(n_classes, weight_column=weight_column,
                          label_vocabulary=label_vocabulary,
                          loss_reduction=loss_reduction)


def regression_head(weight_column=None, label_dimension: int = 1,
                    loss_reduction: str = SUM, loss_fn=None,
                    inverse_link_fn=None, name: Optional[str] = None):
  """The TF1 regressor head (mean squared error)."""
  return TF1RegressionHead(label_dimension=label_dimension,
                           weight_column=weight_column,
                           loss_reduction=loss_reduction, loss_fn=loss_fn,
                           inverse_link_fn=inverse_link_fn, name=name)
