"""`tf.estimator.MultiClassHead`: softmax cross entropy over n_classes."""

from typing import Optional, Sequence

import tensorflow as tf

from estimator_compat import export as export_lib
from estimator_compat.head import base_head
from estimator_compat.head import checks
from estimator_compat.head import keys as keys_lib
from estimator_compat.head import vocabulary
from estimator_compat.head import weights as weights_lib

_K = keys_lib.MetricKeys
_P = keys_lib.PredictionKeys
_VALID_KEYS = (_P.LOGITS, _P.PROBABILITIES, _P.CLASS_IDS, _P.CLASSES,
               _P.ALL_CLASS_IDS, _P.ALL_CLASSES)


def label_ids(labels: tf.Tensor, n_classes: int,
              label_vocabulary: Optional[Sequence[str]]) -> tf.Tensor:
  """Integer class ids of dense labels (strings looked up in the vocabulary).

  Raises:
    ValueError: integer labels expected but not given, or string labels
      expected (a vocabulary) but not given.
  """
  if label_vocabulary is None:
    if not labels.dtype.is_integer:
      raise ValueError(
          f"Labels dtype should be integer. Instead got {labels.dtype}. Fix: "
          "feed integer class ids, or pass label_vocabulary for string labels.")
    ids = labels
  else:
    ids = vocabulary.vocabulary_ids(labels, label_vocabulary)
  return checks.label_range(ids, n_classes)


class MultiClassHead(base_head.CannedHead):
  """Head for classification into n_classes > 2, as TF 2.15's.

  Args:
    n_classes: number of classes, > 2.
    weight_column: a string or numeric column of example weights.
    label_vocabulary: list of n_classes label strings; labels are then
      strings, else integer ids in [0, n_classes).
    loss_reduction: a `tf.losses.Reduction` but NONE.
    loss_fn: optional loss_fn(labels, logits[, features]) returning the
      unreduced loss of shape [D0, ... DN, 1].
    name: the head's name: suffix of its metric and summary keys.
  """

  def __init__(self, n_classes: int, weight_column=None,
               label_vocabulary: Optional[Sequence[str]] = None,
               loss_reduction: str = "sum_over_batch_size",
               loss_fn=None, name: Optional[str] = None):
    if n_classes is None:
      raise ValueError("n_classes cannot be None. Fix: pass the number of "
                       "classes.")
    checks.label_vocabulary(label_vocabulary)
    if label_vocabulary is not None and len(label_vocabulary) != n_classes:
      raise ValueError(
          '"label_vocabulary" does not have "n_classes" items. '
          f"len(label_vocabulary)={len(label_vocabulary)}, "
          f"n_classes={n_classes}, label_vocabulary={label_vocabulary}. Fix: "
          "give one label string per class.")
    self._set_common(weight_column=weight_column,
                     loss_reduction=loss_reduction, loss_fn=loss_fn,
                     name=name)
    self._n_classes = checks.n_classes_above_two(n_classes)
    self._label_vocabulary = label_vocabulary

  @property
  def logits_dimension(self) -> int:
    return self._n_classes

  def _processed_labels(self, logits, labels):
    labels = checks.dense_labels(labels, logits, 1)
    return label_ids(labels, self._n_classes, self._label_vocabulary)

  def _unweighted_loss_and_weights(self, logits, ids, features):
    if self._loss_fn:
      loss = checks.call_loss_fn(self._loss_fn, ids, logits, features)
    else:
      loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(
          labels=ids, logits=logits,
          reduction=tf.compat.v1.losses.Reduction.NONE)
      loss = tf.expand_dims(loss, axis=-1)
    weights = weights_lib.weights_for(features, self._weight_column, logits)
    return loss, weights

  def loss(self, labels, logits, features=None, mode=None,
           regularization_losses=None):
    """The regularized training loss (see `Head.loss`)."""
    del mode
    features = features or {}
    with tf.compat.v1.name_scope("losses"):
      logits = checks.logits_with_final_dim(logits, self.logits_dimension)
      ids = self._processed_labels(logits, labels)
      loss, weights = self._unweighted_loss_and_weights(logits, ids, features)
      return base_head.add_regularization(
          base_head.weighted_loss(loss, weights, self._loss_reduction),
          regularization_losses)

  def predictions(self, logits, keys=None):
    """Predictions by key (see `Head.predictions`)."""
    if keys:
      checks.prediction_keys(keys, _VALID_KEYS)
    else:
      keys = _VALID_KEYS
    logits = checks.logits_with_final_dim(logits, self.logits_dimension)
    out = {}
    with tf.compat.v1.name_scope("predictions"):
      if _P.LOGITS in keys:
        out[_P.LOGITS] = logits
      if _P.PROBABILITIES in keys:
        out[_P.PROBABILITIES] = tf.nn.softmax(logits, name=_P.PROBABILITIES)
      if _P.CLASS_IDS in keys or _P.CLASSES in keys:
        class_ids = tf.expand_dims(
            tf.math.argmax(logits, axis=-1, name=_P.CLASS_IDS), -1)
        if _P.CLASS_IDS in keys:
          out[_P.CLASS_IDS] = class_ids
        if _P.CLASSES in keys:
          out[_P.CLASSES] = vocabulary.class_strings(
              class_ids, self._label_vocabulary or None)
      if _P.ALL_CLASS_IDS in keys:
        out[_P.ALL_CLASS_IDS] = base_head.all_class_ids(logits,
                                                        self._n_classes)
      if _P.ALL_CLASSES in keys:
        out[_P.ALL_CLASSES] = base_head.all_classes(
            logits, self._n_classes, self._label_vocabulary)
    return out

  def metrics(self, regularization_losses=None):
    """Fresh eval metrics (see `Head.metrics`)."""
    with tf.compat.v1.name_scope("metrics"):
      out = {self._summary_key(_K.LOSS_MEAN):
                 tf.keras.metrics.Mean(name=_K.LOSS_MEAN)}
      if regularization_losses is not None:
        out[self._summary_key(_K.LOSS_REGULARIZATION)] = (
            tf.keras.metrics.Mean(name=_K.LOSS_REGULARIZATION))
      out[self._summary_key(_K.ACCURACY)] = tf.keras.metrics.Accuracy(
          name=_K.ACCURACY)
    return out

  def update_metrics(self, eval_metrics, features, logits, labels,
                     regularization_losses=None):
    """Updates the eval metrics with a batch (see `Head.update_metrics`)."""
    features = features or {}
    class_ids = self.predictions(logits)[_P.CLASS_IDS]
    logits = checks.logits_with_final_dim(logits, self.logits_dimension)
    ids = self._processed_labels(logits, labels)
    loss, weights = self._unweighted_loss_and_weights(logits, ids, features)
    eval_metrics[self._summary_key(_K.LOSS_MEAN)].update_state(
        values=loss, sample_weight=weights)
    eval_metrics[self._summary_key(_K.ACCURACY)].update_state(
        y_true=ids, y_pred=class_ids, sample_weight=weights)
    if regularization_losses is not None:
      eval_metrics[self._summary_key(_K.LOSS_REGULARIZATION)].update_state(
          values=tf.math.add_n(regularization_losses))
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
