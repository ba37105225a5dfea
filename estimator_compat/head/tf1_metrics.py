"""The eval metric ops of TF 2.15's TF1 canned heads (tf.compat.v1.metrics).

The TF1 canned estimators (`tf.compat.v1.estimator.DNNClassifier`, ...)
reported the same metric keys as the v2 heads but computed them with
`tf.compat.v1.metrics` (e.g. a trapezoidal AUC), so their values differ
slightly from the Keras metrics of the v2 heads; these functions give the
TF1 values. Each returns a dict of (value, update_op) pairs by metric key.
"""

from typing import Callable, Dict, Optional, Sequence, Tuple

import tensorflow as tf

from estimator_compat.head import keys as keys_lib

_K = keys_lib.MetricKeys
_v1 = tf.compat.v1.metrics
MetricOps = Dict[str, Tuple[tf.Tensor, tf.Tensor]]


def _broadcast(weights, values):
  if weights is None:
    return None
  return tf.compat.v2.__internal__.ops.broadcast_weights(weights, values)


def _float_mean(values, weights, name):
  with tf.compat.v1.name_scope(name, "mean", (values, weights)) as scope:
    values = tf.cast(values, tf.float32)
    return _v1.mean(values, weights=_broadcast(weights, values), name=scope)


def _regularization(ops: MetricOps, key: Callable[[str], str],
                    regularization_loss) -> MetricOps:
  if regularization_loss is not None:
    ops[key(_K.LOSS_REGULARIZATION)] = _v1.mean(
        values=regularization_loss, name=_K.LOSS_REGULARIZATION)
  return ops


def multi_class(key: Callable[[str], str], labels, class_ids, weights,
                unreduced_loss, regularization_loss) -> MetricOps:
  """average_loss, accuracy (and regularization_loss)."""
  with tf.compat.v1.name_scope(None, "metrics"):
    ops = {
        key(_K.LOSS_MEAN): _v1.mean(values=unreduced_loss, weights=weights,
                                    name=_K.LOSS_MEAN),
        key(_K.ACCURACY): _v1.accuracy(labels=labels, predictions=class_ids,
                                       weights=weights, name=_K.ACCURACY),
    }
    return _regularization(ops, key, regularization_loss)


def _auc(labels, predictions, weights, curve, name):
  with tf.compat.v1.name_scope(name, "auc") as scope:
    predictions = tf.cast(predictions, tf.float32)
    return _v1.auc(labels=labels, predictions=predictions,
                   weights=_broadcast(weights, predictions), curve=curve,
                   name=scope)


def _at_threshold(metric, labels, logistic, weights, threshold, name):
  with tf.compat.v1.name_scope(name, "at_threshold") as scope:
    value, update = metric(labels=labels, predictions=logistic,
                           thresholds=(threshold,), weights=weights,
                           name=scope)
    return tf.squeeze(value), tf.squeeze(update)


def _accuracy_at(labels, logistic, weights, threshold, name):
  with tf.compat.v1.name_scope(name, "accuracy_at") as scope:
    predicted = tf.cast(tf.greater_equal(logistic, threshold), tf.float32)
    return _v1.accuracy(labels=labels, predictions=predicted, weights=weights,
                        name=scope)


def binary(key: Callable[[str], str], labels, logistic, class_ids, weights,
           unreduced_loss, regularization_loss,
           thresholds: Sequence[float]) -> MetricOps:
  """The binary head's metrics: loss, accuracy, precision, recall, means,
  accuracy baseline, AUCs and the per-threshold metrics."""
  with tf.compat.v1.name_scope(None, "metrics"):
    label_mean = _float_mean(labels, weights, _K.LABEL_MEAN)
    with tf.compat.v1.name_scope(None, "accuracy_baseline"):
      value, update = label_mean
      baseline = (tf.maximum(value, 1. - value, name="value"),
                  tf.maximum(update, 1 - update, name="update_op"))
    ops = {
        key(_K.LOSS_MEAN): _v1.mean(values=unreduced_loss, weights=weights,
                                    name=_K.LOSS_MEAN),
        key(_K.ACCURACY): _v1.accuracy(labels=labels, predictions=class_ids,
                                       weights=weights, name=_K.ACCURACY),
        key(_K.PRECISION): _v1.precision(labels=labels, predictions=class_ids,
                                         weights=weights, name=_K.PRECISION),
        key(_K.RECALL): _v1.recall(labels=labels, predictions=class_ids,
                                   weights=weights, name=_K.RECALL),
        key(_K.PREDICTION_MEAN): _float_mean(logistic, weights,
                                             _K.PREDICTION_MEAN),
        key(_K.LABEL_MEAN): label_mean,
        key(_K.ACCURACY_BASELINE): baseline,
        key(_K.AUC): _auc(labels, logistic, weights, "ROC", _K.AUC),
        key(_K.AUC_PR): _auc(labels, logistic, weights, "PR", _K.AUC_PR),
    }
    _regularization(ops, key, regularization_loss)
    for threshold in thresholds:
      name = _K.ACCURACY_AT_THRESHOLD % threshold
      ops[key(name)] = _accuracy_at(labels, logistic, weights, threshold,
                                    name)
      name = _K.PRECISION_AT_THRESHOLD % threshold
      ops[key(name)] = _at_threshold(_v1.precision_at_thresholds, labels,
                                     logistic, weights, threshold, name)
      name = _K.RECALL_AT_THRESHOLD % threshold
      ops[key(name)] = _at_threshold(_v1.recall_at_thresholds, labels,
                                     logistic, weights, threshold, name)
    return ops


def regression(key: Callable[[str], str], predicted, labels, weights,
               unreduced_loss,
               regularization_loss: Optional[tf.Tensor]) -> MetricOps:
  """average_loss, prediction/mean, label/mean (and regularization_loss)."""
  ops = {
      key(_K.LOSS_MEAN): _v1.mean(values=unreduced_loss, weights=weights),
      key(_K.PREDICTION_MEAN): _float_mean(predicted, weights,
                                           _K.PREDICTION_MEAN),
      key(_K.LABEL_MEAN): _v1.mean(values=labels, weights=weights),
  }
  return _regularization(ops, key, regularization_loss)
