"""`tf.estimator.BinaryClassHead`: sigmoid cross entropy on one logit."""

from typing import Optional, Sequence

import tensorflow as tf

from estimator_compat import export as export_lib
from estimator_compat.head import base_head
from estimator_compat.head import checks
from estimator_compat.head import keys as keys_lib
from estimator_compat.head import metric_objects
from estimator_compat.head import vocabulary
from estimator_compat.head import weights as weights_lib

_K = keys_lib.MetricKeys
_P = keys_lib.PredictionKeys
_VALID_KEYS = (_P.LOGITS, _P.LOGISTIC, _P.PROBABILITIES, _P.CLASS_IDS,
               _P.CLASSES, _P.ALL_CLASS_IDS, _P.ALL_CLASSES)


class BinaryClassHead(base_head.CannedHead):
  """Head for binary classification, as TF 2.15's.

  Args:
    weight_column: a string or numeric column of example weights.
    thresholds: floats in (0, 1); each adds accuracy, precision and recall
      at that threshold to the eval metrics.
    label_vocabulary: list of the two label strings; labels are then
      strings, else integers (or floats) in {0, 1}.
    loss_reduction: a `tf.losses.Reduction` but NONE.
    loss_fn: optional loss_fn(labels, logits[, features]) returning the
      unreduced loss of shape [D0, ... DN, 1].
    name: the head's name: suffix of its metric and summary keys.
  """

  def __init__(self, weight_column=None,
               thresholds: Optional[Sequence[float]] = None,
               label_vocabulary: Optional[Sequence[str]] = None,
               loss_reduction: str = "sum_over_batch_size",
               loss_fn=None, name: Optional[str] = None):
    checks.label_vocabulary(label_vocabulary)
    thresholds = tuple(thresholds) if thresholds else ()
    for threshold in thresholds:
      if threshold <= 0.0 or threshold >= 1.0:
        raise ValueError(f"thresholds not in (0, 1): {(thresholds,)}. Fix: "
                         "pass thresholds strictly between 0 and 1.")
    self._set_common(weight_column=weight_column,
                     loss_reduction=loss_reduction, loss_fn=loss_fn,
                     name=name)
    self._thresholds = thresholds
    self._label_vocabulary = label_vocabulary

  @property
  def logits_dimension(self) -> int:
    return 1

  def _processed_labels(self, logits, labels) -> tf.Tensor:
    """Labels as float 0/1 ids, checked."""
    labels = checks.dense_labels(labels, logits, 1)
    if self._label_vocabulary is not None:
      if labels.dtype != tf.string:  # TF 2.15's vocabulary table refused.
        raise TypeError(
            "Dtype of argument `keys` must be <dtype: 'string'>, received: "
            f"{labels.dtype}. Fix: feed the label strings, or drop "
            "label_vocabulary for integer labels.")
      labels = vocabulary.vocabulary_ids(labels, self._label_vocabulary)
    labels = tf.cast(labels, tf.float32)
    return checks.label_range(labels, n_classes=2)

  def _unweighted_loss_and_weights(self, logits, labels, features):
    if self._loss_fn:
      loss = checks.call_loss_fn(self._loss_fn, labels, logits, features)
    else:
      loss = tf.compat.v1.nn.sigmoid_cross_entropy_with_logits(
          labels=labels, logits=logits)
    weights = weights_lib.weights_for(features, self._weight_column, logits)
    return loss, weights

  def loss(self, labels, logits, features=None, mode=None,
           regularization_losses=None):
    """The regularized training loss (see `Head.loss`)."""
    del mode
    features = features or {}
    with tf.compat.v1.name_scope("losses"):
      logits = checks.logits_with_final_dim(logits, 1)
      labels = self._processed_labels(logits, labels)
      loss, weights = self._unweighted_loss_and_weights(logits, labels,
                                                        features)
      return base_head.add_regularization(
          base_head.weighted_loss(loss, weights, self._loss_reduction),
          regularization_losses)

  def predictions(self, logits, keys=None):
    """Predictions by key (see `Head.predictions`)."""
    if keys:
      checks.prediction_keys(keys, _VALID_KEYS)
    else:
      keys = _VALID_KEYS
    logits = checks.logits_with_final_dim(logits, 1)
    out = {}
    with tf.compat.v1.name_scope("predictions"):
      if _P.LOGITS in keys:
        out[_P.LOGITS] = logits
      if _P.LOGISTIC in keys:
        out[_P.LOGISTIC] = tf.math.sigmoid(logits, name=_P.LOGISTIC)
      two_class_logits = tf.concat((tf.zeros_like(logits), logits), axis=-1,
                                   name="two_class_logits")
      if _P.PROBABILITIES in keys:
        out[_P.PROBABILITIES] = tf.nn.softmax(two_class_logits,
                                              name=_P.PROBABILITIES)
      if _P.CLASS_IDS in keys or _P.CLASSES in keys:
        class_ids = tf.expand_dims(
            tf.math.argmax(two_class_logits, axis=-1, name=_P.CLASS_IDS), -1)
        if _P.CLASS_IDS in keys:
          out[_P.CLASS_IDS] = class_ids
        if _P.CLASSES in keys:
          out[_P.CLASSES] = vocabulary.class_strings(
              class_ids, self._label_vocabulary)
      if _P.ALL_CLASS_IDS in keys:
        out[_P.ALL_CLASS_IDS] = base_head.all_class_ids(logits, 2)
      if _P.ALL_CLASSES in keys:
        out[_P.ALL_CLASSES] = base_head.all_classes(
            logits, 2, self._label_vocabulary)
    return out

  def _threshold_keys(self, template: str):
    return [self._summary_key(template % t) for t in self._thresholds]

  def metrics(self, regularization_losses=None):
    """Fresh eval metrics (see `Head.metrics`)."""
    m = tf.keras.metrics
    with tf.compat.v1.name_scope("metrics"):
      out = {
          self._summary_key(_K.LOSS_MEAN): m.Mean(name=_K.LOSS_MEAN),
          self._summary_key(_K.ACCURACY): m.Accuracy(name=_K.ACCURACY),
          self._summary_key(_K.PRECISION): m.Precision(name=_K.PRECISION),
          self._summary_key(_K.RECALL): m.Recall(name=_K.RECALL),
          self._summary_key(_K.PREDICTION_MEAN): m.Mean(
              name=_K.PREDICTION_MEAN),
          self._summary_key(_K.LABEL_MEAN): m.Mean(name=_K.LABEL_MEAN),
          self._summary_key(_K.ACCURACY_BASELINE):
              metric_objects.AccuracyBaseline(name=_K.ACCURACY_BASELINE),
          self._summary_key(_K.AUC): m.AUC(name=_K.AUC),
          self._summary_key(_K.AUC_PR): m.AUC(curve="PR", name=_K.AUC_PR),
      }
      if regularization_losses is not None:
        out[self._summary_key(_K.LOSS_REGULARIZATION)] = m.Mean(
            name=_K.LOSS_REGULARIZATION)
      for threshold, acc, prec, rec in zip(
          self._thresholds, self._threshold_keys(_K.ACCURACY_AT_THRESHOLD),
          self._threshold_keys(_K.PRECISION_AT_THRESHOLD),
          self._threshold_keys(_K.RECALL_AT_THRESHOLD)):
        out[acc] = m.BinaryAccuracy(name=acc, threshold=threshold)
        out[prec] = m.Precision(name=prec, thresholds=threshold)
        out[rec] = m.Recall(name=rec, thresholds=threshold)
    return out

  def update_metrics(self, eval_metrics, features, logits, labels,
                     regularization_losses=None):
    """Updates the eval metrics with a batch (see `Head.update_metrics`)."""
    features = features or {}
    class_ids = self.predictions(logits)[_P.CLASS_IDS]
    logits = checks.logits_with_final_dim(logits, 1)
    labels = self._processed_labels(logits, labels)
    loss, weights = self._unweighted_loss_and_weights(logits, labels, features)
    key = self._summary_key
    eval_metrics[key(_K.LOSS_MEAN)].update_state(
        values=loss, sample_weight=weights)
    for name in (_K.ACCURACY, _K.PRECISION, _K.RECALL):
      eval_metrics[key(name)].update_state(
          y_true=labels, y_pred=class_ids, sample_weight=weights)
    logistic = self.predictions(logits, [_P.LOGISTIC])[_P.LOGISTIC]
    base_head.update_with_broadcast_weights(
        eval_metrics[key(_K.PREDICTION_MEAN)], logistic, weights)
    for name in (_K.LABEL_MEAN, _K.ACCURACY_BASELINE):
      base_head.update_with_broadcast_weights(eval_metrics[key(name)], labels,
                                              weights)
    broadcast = (None if weights is None else
                 tf.compat.v2.__internal__.ops.broadcast_weights(
                     weights, logistic))
    for name in (_K.AUC, _K.AUC_PR):
      eval_metrics[key(name)].update_state(
          y_true=labels, y_pred=logistic, sample_weight=broadcast)
    if regularization_losses is not None:
      eval_metrics[key(_K.LOSS_REGULARIZATION)].update_state(
          values=tf.math.add_n(regularization_losses))
    for template in (_K.ACCURACY_AT_THRESHOLD, _K.PRECISION_AT_THRESHOLD,
                     _K.RECALL_AT_THRESHOLD):
      for name in self._threshold_keys(template):
        eval_metrics[name].update_state(y_true=labels, y_pred=logistic,
                                        sample_weight=weights)
    return eval_metrics

  def _export_outputs(self, predictions):
    classifier = base_head.classification_output(
        predictions[_P.PROBABILITIES], 2, self._label_vocabulary)
    return {
        keys_lib.DEFAULT_SERVING_KEY: classifier,
        keys_lib.CLASSIFY_SERVING_KEY: classifier,
        keys_lib.REGRESS_SERVING_KEY: export_lib.RegressionOutput(
            value=predictions[_P.LOGISTIC]),
        keys_lib.PREDICT_SERVING_KEY: export_lib.PredictOutput(predictions),
    }
