"""`tf.estimator.RegressionHead` and its GLM variants (Poisson, logistic)."""

from typing import Callable, Optional

import tensorflow as tf

from estimator_compat import export as export_lib
from estimator_compat.head import base_head
from estimator_compat.head import checks
from estimator_compat.head import keys as keys_lib
from estimator_compat.head import weights as weights_lib

_K = keys_lib.MetricKeys
_P = keys_lib.PredictionKeys


class RegressionHead(base_head.CannedHead):
  """Head for regression with mean squared error loss, as TF 2.15's.

  Args:
    label_dimension: number of regression targets per example.
    weight_column: a string or numeric column of example weights; they may
      be [D0, ... DN], [D0, ... DN, 1] or [D0, ... DN, label_dimension].
    loss_reduction: a `tf.losses.Reduction` but NONE.
    loss_fn: optional loss_fn(labels, logits[, features]) returning the
      unreduced loss of shape [D0, ... DN, label_dimension].
    inverse_link_fn: optional function of the logits giving the predictions
      (the logits are then also a prediction, `logits`).
    name: the head's name: suffix of its metric and summary keys.
  """

  def __init__(self, label_dimension: int = 1, weight_column=None,
               loss_reduction: str = "sum_over_batch_size",
               loss_fn: Optional[Callable[..., tf.Tensor]] = None,
               inverse_link_fn: Optional[Callable[[tf.Tensor],
                                                  tf.Tensor]] = None,
               name: Optional[str] = None):
    if label_dimension < 1:
      raise ValueError(f"Invalid label_dimension {label_dimension}. Fix: "
                       "label_dimension must be at least 1.")
    self._set_common(weight_column=weight_column,
                     loss_reduction=loss_reduction, loss_fn=loss_fn,
                     name=name)
    self._logits_dimension = label_dimension
    self._inverse_link_fn = inverse_link_fn

  @property
  def logits_dimension(self) -> int:
    return self._logits_dimension

  def _processed_labels(self, logits, labels):
    labels = checks.dense_labels(labels, logits, self._logits_dimension)
    return tf.cast(labels, tf.float32)

  def _unweighted_loss_and_weights(self, logits, labels, features):
    if self._loss_fn:
      loss = checks.call_loss_fn(self._loss_fn, labels, logits, features,
                                 expected_loss_dim=self._logits_dimension)
    else:
      loss = tf.compat.v1.losses.mean_squared_error(
          labels=labels, predictions=logits,
          reduction=tf.compat.v1.losses.Reduction.NONE)
    weights = weights_lib.weights_for(features, self._weight_column, logits,
                                      allow_per_logit_weights=True)
    return loss, weights

  def loss(self, labels, logits, features=None, mode=None,
           regularization_losses=None):
    """The regularized training loss (see `Head.loss`)."""
    del mode
    features = features or {}
    with tf.compat.v1.name_scope("losses"):
      logits = checks.logits_with_final_dim(logits, self._logits_dimension)
      labels = self._processed_labels(logits, labels)
      loss, weights = self._unweighted_loss_and_weights(logits, labels,
                                                        features)
      return base_head.add_regularization(
          base_head.weighted_loss(loss, weights, self._loss_reduction),
          regularization_losses)

  def predictions(self, logits):  # type: ignore[override]  # as TF 2.15
    """`predictions` (and `logits` with an inverse link function)."""
    logits = checks.logits_with_final_dim(logits, self._logits_dimension)
    with tf.compat.v1.name_scope("predictions"):
      if self._inverse_link_fn:
        return {_P.PREDICTIONS: self._inverse_link_fn(logits),
                _P.LOGITS: logits}
      return {_P.PREDICTIONS: logits}

  def metrics(self, regularization_losses=None):
    """Fresh eval metrics (see `Head.metrics`)."""
    with tf.compat.v1.name_scope("metrics"):
      out = {
          self._summary_key(name): tf.keras.metrics.Mean(name=name)
          for name in (_K.LOSS_MEAN, _K.PREDICTION_MEAN, _K.LABEL_MEAN)}
      if regularization_losses is not None:
        out[self._summary_key(_K.LOSS_REGULARIZATION)] = (
            tf.keras.metrics.Mean(name=_K.LOSS_REGULARIZATION))
    return out

  def update_metrics(self, eval_metrics, features, logits, labels,
                     regularization_losses=None):
    """Updates the eval metrics with a batch (see `Head.update_metrics`)."""
    features = features or {}
    predicted = self.predictions(logits)[_P.PREDICTIONS]
    logits = checks.logits_with_final_dim(logits, self._logits_dimension)
    labels = self._processed_labels(logits, labels)
    loss, weights = self._unweighted_loss_and_weights(logits, labels, features)
    key = self._summary_key
    eval_metrics[key(_K.LOSS_MEAN)].update_state(values=loss,
                                                 sample_weight=weights)
    eval_metrics[key(_K.LABEL_MEAN)].update_state(values=labels,
                                                  sample_weight=weights)
    base_head.update_with_broadcast_weights(
        eval_metrics[key(_K.PREDICTION_MEAN)], predicted, weights)
    if regularization_losses is not None:
      eval_metrics[key(_K.LOSS_REGULARIZATION)].update_state(
          values=tf.math.add_n(regularization_losses))
    return eval_metrics

  def _export_outputs(self, predictions):
    regression = export_lib.RegressionOutput(value=predictions[_P.PREDICTIONS])
    return {
        keys_lib.DEFAULT_SERVING_KEY: regression,
        keys_lib.REGRESS_SERVING_KEY: regression,
        keys_lib.PREDICT_SERVING_KEY: export_lib.PredictOutput(predictions),
    }


class PoissonRegressionHead(RegressionHead):
  """Regression with log Poisson loss on log-rates; predictions exp(logits).

  Args:
    label_dimension: number of regression targets per example.
    weight_column: a string or numeric column of example weights.
    loss_reduction: a `tf.losses.Reduction` but NONE.
    compute_full_loss: include the constant Stirling term log(z!) in the loss.
    name: the head's name: suffix of its metric and summary keys.
  """

  def __init__(self, label_dimension: int = 1, weight_column=None,
               loss_reduction: str = "sum_over_batch_size",
               compute_full_loss: bool = True, name: Optional[str] = None):
    self._compute_full_loss = compute_full_loss
    super().__init__(label_dimension=label_dimension,
                     weight_column=weight_column,
                     loss_reduction=loss_reduction, loss_fn=self._poisson_loss,
                     inverse_link_fn=tf.math.exp, name=name)

  def _poisson_loss(self, labels, logits):
    return tf.nn.log_poisson_loss(targets=labels, log_input=logits,
                                  compute_full_loss=self._compute_full_loss)


class LogisticRegressionHead(RegressionHead):
  """Regression of targets in [0, 1] with sigmoid cross entropy.

  Args:
    weight_column: a string or numeric column of example weights.
    loss_reduction: a `tf.losses.Reduction` but NONE.
    name: the head's name: suffix of its metric and summary keys.
  """

  def __init__(self, weight_column=None,
               loss_reduction: str = "sum_over_batch_size",
               name: Optional[str] = None):
    super().__init__(label_dimension=1, weight_column=weight_column,
                     loss_reduction=loss_reduction,
                     loss_fn=self._logistic_loss,
                     inverse_link_fn=tf.math.sigmoid, name=name)

  def _logistic_loss(self, labels, logits):
    labels = checks.label_range(labels, n_classes=2,
                                message="Labels must be in range [0, 1]")
    return tf.compat.v1.nn.sigmoid_cross_entropy_with_logits(
        labels=labels, logits=logits)
