"""`tf.estimator.MultiLabelHead`: a sigmoid cross entropy per class."""

from typing import Optional, Sequence, Union

import tensorflow as tf

from estimator_compat import export as export_lib
from estimator_compat.head import base_head
from estimator_compat.head import checks
from estimator_compat.head import keys as keys_lib
from estimator_compat.head import vocabulary
from estimator_compat.head import weights as weights_lib

_K = keys_lib.MetricKeys
_P = keys_lib.PredictionKeys
_VALID_KEYS = (_P.LOGITS, _P.PROBABILITIES, _P.CLASSES)


def _class_ids(classes: Sequence[Union[int, str]], n_classes: int,
               label_vocabulary: Optional[Sequence[str]]):
  """classes_for_class_based_metrics as class ids, checked."""
  if not classes:
    return ()
  classes = tuple(classes)
  if isinstance(classes[0], str):
    if not label_vocabulary:
      raise ValueError(
          "label_vocabulary must be provided when "
          "classes_for_class_based_metrics are strings. Fix: pass "
          "label_vocabulary, or give the classes as integer ids.")
    return tuple(label_vocabulary.index(name) for name in classes)
  for class_id in classes:
    if class_id < 0 or class_id >= n_classes:
      raise ValueError(
          "All classes_for_class_based_metrics must be in range "
          f"[0, {n_classes - 1}]. Given: {class_id}. Fix: use class ids "
          "below n_classes.")
  return classes


class MultiLabelHead(base_head.CannedHead):
  """Head for multi-label classification, as TF 2.15's.

  Labels are a multi-hot int Tensor [D0, ... DN, n_classes], or a
  SparseTensor of class ids (or of strings, with label_vocabulary).

  Args:
    n_classes: number of classes, > 1.
    weight_column: a string or numeric column of example weights.
    thresholds: floats in (0, 1) for accuracy/precision/recall metrics.
    label_vocabulary: list of n_classes strings, for string SparseTensor
      labels and the `classes` prediction.
    loss_reduction: a `tf.losses.Reduction` but NONE.
    loss_fn: optional loss_fn(labels, logits[, features]) returning the
      unreduced loss of shape [D0, ... DN, 1].
    classes_for_class_based_metrics: class ids or names that get their own
      probability mean and AUC metrics.
    name: the head's name: suffix of its metric and summary keys.
  """

  def __init__(self, n_classes: int, weight_column=None,
               thresholds: Optional[Sequence[float]] = None,
               label_vocabulary: Optional[Sequence[str]] = None,
               loss_reduction: str = "sum_over_batch_size", loss_fn=None,
               classes_for_class_based_metrics=None,
               name: Optional[str] = None):
    if n_classes is None or n_classes < 2:
      raise ValueError(
          "n_classes must be > 1 for multi-label classification. Given: "
          f"{n_classes}. Fix: pass the number of labels, at least 2.")
    thresholds = tuple(thresholds) if thresholds else ()
    for threshold in thresholds:
      if threshold <= 0.0 or threshold >= 1.0:
        raise ValueError(
            f"thresholds must be in (0, 1) range. Given: {threshold}. Fix: "
            "pass thresholds strictly between 0 and 1.")
    if label_vocabulary is not None:
      if not isinstance(label_vocabulary, (list, tuple)):
        raise ValueError(
            "label_vocabulary must be a list or tuple. Given type: "
            f"{type(label_vocabulary)}. Fix: pass the label strings as a "
            "list.")
      if len(label_vocabulary) != n_classes:
        raise ValueError(
            f"Length of label_vocabulary must be n_classes ({n_classes}). "
            f"Given: {len(label_vocabulary)}. Fix: give one string per class.")
    if loss_fn:  # Before the reduction here, as in TF 2.15.
      checks.loss_fn_args(loss_fn)
    self._set_common(weight_column=weight_column,
                     loss_reduction=loss_reduction, loss_fn=loss_fn,
                     name=name)
    self._class_ids = _class_ids(classes_for_class_based_metrics, n_classes,
                                 label_vocabulary)
    self._n_classes = n_classes
    self._thresholds = thresholds
    self._label_vocabulary = label_vocabulary

  @property
  def logits_dimension(self) -> int:
    return self._n_classes

  def _sparse_indicator(self, labels: tf.SparseTensor) -> tf.Tensor:
    values = labels.values
    if labels.dtype == tf.string:
      ids = vocabulary.vocabulary_ids(values, self._label_vocabulary)
      return tf.sparse.to_indicator(
          tf.SparseTensor(labels.indices, ids, labels.dense_shape),
          self._n_classes)
    if not values.dtype.is_integer:
      raise ValueError(
          f"Labels dtype should be integer. Instead got {values.dtype}. Fix: "
          "feed integer class ids, or strings with label_vocabulary.")
    checked = checks.label_range(
        values, self._n_classes,
        message=("labels must be an integer SparseTensor with values in "
                 f"[0, {self._n_classes})"))
    if tf.executing_eagerly():
      return tf.sparse.to_indicator(labels, self._n_classes)
    with tf.control_dependencies([checked]):
      return tf.sparse.to_indicator(labels, self._n_classes)

  def _processed_labels(self, logits, labels):
    """Multi-hot int64 labels of the logits' shape."""
    if labels is None:
      checks.dense_labels(labels, logits, self._n_classes)  # Raises.
    if isinstance(labels, tf.compat.v1.SparseTensorValue):
      labels = tf.SparseTensor.from_value(labels)
    if isinstance(labels, tf.SparseTensor):
      labels = tf.cast(self._sparse_indicator(labels), tf.int64)
    else:
      labels = checks.label_range(
          labels, 2, message=("labels must be an integer indicator Tensor "
                              "with values in [0, 1]"))
    return checks.dense_labels(labels, logits, self._n_classes)

  def _unweighted_loss_and_weights(self, logits, labels, features):
    if self._loss_fn:
      loss = checks.call_loss_fn(self._loss_fn, labels, logits, features)
    else:
      loss = tf.compat.v1.losses.sigmoid_cross_entropy(
          multi_class_labels=labels, logits=logits,
          reduction=tf.compat.v1.losses.Reduction.NONE)
      loss = tf.math.reduce_mean(loss, axis=-1, keepdims=True)
    weights = weights_lib.weights_for(features, self._weight_column, logits)
    return loss, weights

  def loss(self, labels, logits, features=None, mode=None,
           regularization_losses=None):
    """The regularized training loss (see `Head.loss`)."""
    del mode
    features = features or {}
    with tf.compat.v1.name_scope("losses"):
      logits = checks.logits_with_final_dim(logits, self._n_classes)
      labels = self._processed_labels(logits, labels)
      loss, weights = self._unweighted_loss_and_weights(logits, labels,
                                                        features)
      return base_head.add_regularization(
          base_head.weighted_loss(loss, weights, self._loss_reduction),
          regularization_losses)

  def predictions(self, logits, keys=None):
    """Predictions by key: logits, probabilities, classes."""
    if keys:
      checks.prediction_keys(keys, _VALID_KEYS)
    else:
      keys = _VALID_KEYS
    logits = checks.logits_with_final_dim(logits, self._n_classes)
    out = {}
    with tf.compat.v1.name_scope("predictions"):
      if _P.LOGITS in keys:
        out[_P.LOGITS] = logits
      if _P.PROBABILITIES in keys:
        out[_P.PROBABILITIES] = tf.math.sigmoid(logits,
                                                name=_P.PROBABILITIES)
      if _P.CLASSES in keys:
        out[_P.CLASSES] = base_head.all_classes(logits, self._n_classes,
                                                self._label_vocabulary)
    return out

  def _threshold_keys(self, template):
    return [self._summary_key(template % t) for t in self._thresholds]

  def _class_keys(self):
    """(probability mean, AUC, AUC PR) keys per class-based-metrics class."""
    out = []
    for class_id in self._class_ids:
      if self._label_vocabulary is None:
        names = (_K.PROBABILITY_MEAN_AT_CLASS % class_id,
                 _K.AUC_AT_CLASS % class_id, _K.AUC_PR_AT_CLASS % class_id)
      else:
        label = self._label_vocabulary[class_id]
        names = (_K.PROBABILITY_MEAN_AT_NAME % label, _K.AUC_AT_NAME % label,
                 _K.AUC_PR_AT_NAME % label)
      out.append(tuple(self._summary_key(n) for n in names))
    return out

  def metrics(self, regularization_losses=None):
    """Fresh eval metrics (see `Head.metrics`)."""
    m = tf.keras.metrics
    with tf.compat.v1.name_scope(None, "metrics"):
      out = {
          self._summary_key(_K.LOSS_MEAN): m.Mean(name=_K.LOSS_MEAN),
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
      for prob, auc, auc_pr in self._class_keys():
        out[prob] = m.Mean(name=prob)
        out[auc] = m.AUC(name=auc)
        out[auc_pr] = m.AUC(curve="PR", name=auc_pr)
    return out

  def update_metrics(self, eval_metrics, features, logits, labels,
                     regularization_losses=None):
    """Updates the eval metrics with a batch (see `Head.update_metrics`)."""
    features = features or {}
    logits = checks.logits_with_final_dim(logits, self._n_classes)
    labels = self._processed_labels(logits, labels)
    loss, weights = self._unweighted_loss_and_weights(logits, labels, features)
    probabilities = self.predictions(logits, [_P.PROBABILITIES])[
        _P.PROBABILITIES]
    key = self._summary_key
    eval_metrics[key(_K.LOSS_MEAN)].update_state(values=loss,
                                                 sample_weight=weights)
    for name in (_K.AUC, _K.AUC_PR):
      eval_metrics[key(name)].update_state(
          y_true=labels, y_pred=probabilities, sample_weight=weights)
    if regularization_losses is not None:
      eval_metrics[key(_K.LOSS_REGULARIZATION)].update_state(
          values=tf.math.add_n(regularization_losses))
    for template in (_K.ACCURACY_AT_THRESHOLD, _K.PRECISION_AT_THRESHOLD,
                     _K.RECALL_AT_THRESHOLD):
      for name in self._threshold_keys(template):
        eval_metrics[name].update_state(
            y_true=labels, y_pred=probabilities, sample_weight=weights)
    for class_id, (prob, auc, auc_pr) in zip(self._class_ids,
                                             self._class_keys()):
      class_probabilities = probabilities[..., class_id:class_id + 1]
      class_labels = labels[..., class_id:class_id + 1]
      base_head.update_with_broadcast_weights(
          eval_metrics[prob], class_probabilities, weights)
      for name in (auc, auc_pr):
        eval_metrics[name].update_state(
            y_true=class_labels, y_pred=class_probabilities,
            sample_weight=weights)
    return eval_metrics

  def _export_outputs(self, predictions):
    classifier = base_head.classification_output(
        predictions[_P.PROBABILITIES], self._n_classes,
        self._label_vocabulary)
    return {
        keys_lib.DEFAULT_SERVING_KEY: classifier,
        keys_lib.CLASSIFY_SERVING_KEY: classifier,
        keys_lib.PREDICT_SERVING_KEY: export_lib.PredictOutput(predictions),
    }
