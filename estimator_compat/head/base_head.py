"""`tf.estimator.Head`: the interface of TF 2.15's heads, and what they share.

A head turns logits into predictions, a loss, eval metrics, a train op and
export outputs. `Head.create_estimator_spec` assembles these into the
`EstimatorSpec` a model_fn returns, in the order and name scopes TF 2.15
used: predictions, then (EVAL) the loss and the updated Keras metrics, or
(TRAIN) the loss, the train op under the root-level `training` name scope,
and the `loss` summary (`loss/<head name>` for a named head).

Training takes exactly one of
- `optimizer`: a tf.keras *legacy* optimizer (`tf.keras.optimizers.legacy.*`,
  what TF 2.15's heads called `get_updates` on) with `trainable_variables`;
  the head does not tie `optimizer.iterations` to the global step (TF 2.15's
  heads did not either; its canned estimators did);
- `train_op_fn(loss)`: returns the train op.
"""

import abc
from typing import Any, Dict, Optional, Sequence

import tensorflow as tf

from estimator_compat import mode_keys
from estimator_compat import spec as spec_lib
from estimator_compat import export as export_lib
from estimator_compat.head import checks
from estimator_compat.head import keys as keys_lib

ModeKeys = mode_keys.ModeKeys


class Head(abc.ABC):
  """Interface for the head (top) of a model: see the module docstring."""

  @property
  @abc.abstractmethod
  def name(self) -> Optional[str]:
    """The head's name, or None."""

  @property
  @abc.abstractmethod
  def logits_dimension(self) -> int:
    """Size of the last dimension of the logits."""

  @property
  @abc.abstractmethod
  def loss_reduction(self) -> str:
    """The `tf.losses.Reduction` of the training loss over the batch."""

  @abc.abstractmethod
  def loss(self, labels, logits, features=None, mode=None,
           regularization_losses=None):
    """The scalar regularized training loss."""

  @abc.abstractmethod
  def predictions(self, logits, keys=None):
    """A dict of prediction Tensors (all valid keys, or those in `keys`)."""

  @abc.abstractmethod
  def metrics(self, regularization_losses=None):
    """A dict of fresh Keras Metric objects, by metric key."""

  @abc.abstractmethod
  def update_metrics(self, eval_metrics, features, logits, labels,
                     regularization_losses=None):
    """Updates `eval_metrics` with a batch and returns them."""

  def _check_loss_reduction(self, reduction: Any) -> None:
    """Raises ValueError for a reduction this kind of head does not take."""
    checks.loss_reduction(reduction)

  def _summary_key(self, key: str) -> str:
    return f"{key}/{self.name}" if self.name else key

  def _export_outputs(self, predictions: Dict[str, Any]) -> Dict[str, Any]:
    """The export outputs of PREDICT mode, by signature name."""
    raise NotImplementedError(
        f"{type(self).__name__} must implement create_estimator_spec() or "
        "_export_outputs().")

  def create_estimator_spec(
      self, features, mode, logits, labels=None, optimizer=None,
      trainable_variables=None, train_op_fn=None, update_ops=None,
      regularization_losses=None) -> spec_lib.EstimatorSpec:
    """Returns the `EstimatorSpec` a model_fn can return.

    Args:
      features: dict of feature Tensors (the weight column is read here).
      mode: a `ModeKeys`.
      logits: Tensor of shape [D0, ... DN, logits_dimension].
      labels: labels Tensor (or dict, for a MultiHead); required in TRAIN
        and EVAL.
      optimizer: a tf.keras legacy optimizer; the train op is
        `optimizer.get_updates(loss, trainable_variables)[0]`.
      trainable_variables: list or tuple of the variables to train.
      train_op_fn: used without `optimizer`: `train_op_fn(loss)`.
      update_ops: list or tuple of ops to group with the train op.
      regularization_losses: list of scalar losses added to the loss.

    Returns:
      An `EstimatorSpec`.

    Raises:
      ValueError: in TRAIN mode, neither or both of optimizer and
        train_op_fn, or a bad update_ops / trainable_variables.
    """
    with tf.compat.v1.name_scope(self.name, "head"):
      predictions = self.predictions(logits)
      if mode == ModeKeys.PREDICT:
        return spec_lib.EstimatorSpec(
            mode=ModeKeys.PREDICT, predictions=predictions,
            export_outputs=self._export_outputs(predictions))
      loss = self.loss(logits=logits, labels=labels, features=features,
                       mode=mode, regularization_losses=regularization_losses)
      if mode == ModeKeys.EVAL:
        eval_metrics = self.metrics(
            regularization_losses=regularization_losses)
        return spec_lib.EstimatorSpec(
            mode=ModeKeys.EVAL, predictions=predictions, loss=loss,
            eval_metric_ops=self.update_metrics(
                eval_metrics, features, logits, labels,
                regularization_losses=regularization_losses))
      train_op = train_op_for(
          optimizer=optimizer, trainable_variables=trainable_variables,
          train_op_fn=train_op_fn, update_ops=update_ops, loss=loss,
          loss_reduction=self.loss_reduction)
    write_loss_summaries(loss, regularization_losses, self._summary_key)
    return spec_lib.EstimatorSpec(
        mode=ModeKeys.TRAIN, predictions=predictions, loss=loss,
        train_op=train_op)


class CannedHead(Head):
  """What the four canned heads share: their common constructor arguments.

  `Head` stays the abstract interface users subclass; the canned heads check
  and keep `weight_column`, `loss_reduction`, `loss_fn` and `name` here.
  """

  def _set_common(self, *, weight_column, loss_reduction: str, loss_fn,
                  name: Optional[str]) -> None:
    """Checks the reduction, then loss_fn's arguments (TF 2.15's order)."""
    self._check_loss_reduction(loss_reduction)
    if loss_fn:
      checks.loss_fn_args(loss_fn)
    self._weight_column = weight_column
    self._loss_reduction = loss_reduction
    self._loss_fn = loss_fn
    self._name = name

  @property
  def name(self) -> Optional[str]:
    return self._name

  @property
  def loss_reduction(self) -> str:
    return self._loss_reduction


def _check_optimizer(optimizer: Any) -> None:
  legacy = tf.keras.optimizers.legacy.Optimizer
  if isinstance(optimizer, tf.compat.v1.train.Optimizer):
    raise ValueError(
        "The given optimizer is not a tf.keras.optimizers.Optimizer instance. "
        f"Received optimizer of type {type(optimizer)}. Fix: tf.estimator "
        "heads take tf.keras.optimizers.legacy optimizers; a "
        "tf.compat.v1.train optimizer goes through train_op_fn, e.g. "
        "train_op_fn=lambda loss: opt.minimize(loss, "
        "global_step=tf.compat.v1.train.get_global_step()).")
  if isinstance(optimizer, (legacy, tf.keras.optimizers.Optimizer)):
    return
  raise ValueError(
      "The given optimizer is not a tf.keras.optimizers.Optimizer instance. "
      f"Received optimizer of type {type(optimizer)}. Fix: pass a "
      "tf.keras.optimizers.legacy optimizer, or a train_op_fn.")


def _check_trainable_variables(trainable_variables: Any) -> None:
  if trainable_variables is None:
    raise ValueError(
        "trainable_variables cannot be None. Given None. Fix: pass the "
        "model's variables, e.g. tf.compat.v1.trainable_variables().")
  if not isinstance(trainable_variables, (list, tuple)):
    raise ValueError(
        "trainable_variables should be a list or a tuple. Given type: "
        f"{type(trainable_variables)}. Fix: pass a list of variables.")


def train_op_for(optimizer=None, trainable_variables=None, train_op_fn=None,
                 update_ops=None, loss=None,
                 loss_reduction: str = "sum_over_batch_size") -> Any:
  """The train op of a v2 head, built under the root `training` name scope.

  Raises:
    ValueError: neither or both of optimizer and train_op_fn; update_ops or
      trainable_variables not a list or tuple; a v1 optimizer.
  """
  if update_ops is not None and not isinstance(update_ops, (list, tuple)):
    raise ValueError(
        f"update_ops should be a list or a tuple. Given type: "
        f"{type(update_ops)}. Fix: pass update_ops as a list of ops.")
  with tf.compat.v1.name_scope(None), tf.compat.v1.name_scope("training"):
    if optimizer is not None:
      if train_op_fn is not None:
        raise ValueError("train_op_fn and optimizer cannot both be set. "
                         "Fix: pass only one of them.")
      _check_optimizer(optimizer)
      _check_trainable_variables(trainable_variables)
      if not hasattr(optimizer, "get_updates"):
        # TF 2.15 accepted a new-style Keras optimizer, then failed here.
        raise AttributeError(
            f"'{type(optimizer).__name__}' object has no attribute "
            "'get_updates'. Fix: heads call optimizer.get_updates(), which "
            "only tf.keras.optimizers.legacy optimizers have: use "
            f"tf.keras.optimizers.legacy.{type(optimizer).__name__}.")
      if loss_reduction == tf.keras.losses.Reduction.SUM_OVER_BATCH_SIZE:
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        if replicas > 1:
          loss *= (1. / replicas)
      train_op = optimizer.get_updates(loss, list(trainable_variables))[0]
    elif train_op_fn is not None:
      train_op = train_op_fn(loss)
    else:
      raise ValueError(
          "train_op_fn and optimizer cannot both be None. Fix: pass a "
          "tf.keras.optimizers.legacy optimizer (with trainable_variables) "
          "or a train_op_fn to create_estimator_spec in TRAIN mode.")
    if update_ops is not None:
      train_op = tf.group(train_op, *update_ops)
    return train_op


def write_loss_summaries(loss, regularization_losses, summary_key) -> None:
  """The TRAIN summaries: the loss, and the regularization loss if any."""
  with tf.compat.v1.name_scope(None):
    tf.compat.v1.summary.scalar(summary_key(keys_lib.MetricKeys.LOSS), loss)
    if regularization_losses is not None:
      tf.compat.v1.summary.scalar(
          summary_key(keys_lib.MetricKeys.LOSS_REGULARIZATION),
          tf.math.add_n(regularization_losses))


def weighted_loss(unweighted_loss, weights, reduction: str) -> tf.Tensor:
  """The loss reduced over the batch, as tf.keras's weighted losses do."""
  return tf.keras.__internal__.losses.compute_weighted_loss(
      unweighted_loss, sample_weight=weights, reduction=reduction)


def add_regularization(loss, regularization_losses) -> tf.Tensor:
  if regularization_losses is None:
    return loss
  return loss + tf.math.add_n(regularization_losses)


def all_class_ids(logits, n_classes: int) -> tf.Tensor:
  batch_size = tf.compat.v1.shape(logits)[0]
  return tf.tile(tf.expand_dims(tf.range(n_classes), 0), [batch_size, 1])


def all_classes(logits, n_classes: int,
                label_vocabulary: Optional[Sequence[str]] = None) -> tf.Tensor:
  batch_size = tf.compat.v1.shape(logits)[0]
  if label_vocabulary:
    classes = tf.convert_to_tensor([label_vocabulary])
  else:
    classes = tf.strings.as_string(tf.expand_dims(tf.range(n_classes), 0))
  return tf.tile(classes, [batch_size, 1])


def classification_output(scores, n_classes: int,
                          label_vocabulary: Optional[Sequence[str]] = None):
  return export_lib.ClassificationOutput(
      scores=scores, classes=all_classes(scores, n_classes, label_vocabulary))


def update_with_broadcast_weights(metric, values, weights) -> None:
  values = tf.cast(values, tf.float32)
  if weights is not None:
    weights = tf.compat.v2.__internal__.ops.broadcast_weights(weights, values)
  metric.update_state(values=values, sample_weight=weights)
