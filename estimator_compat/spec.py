"""EstimatorSpec: what a model_fn returns, validated with errors that say the fix."""

import collections
from typing import Any, Mapping, Optional

import tensorflow as tf

from estimator_compat import keras_metrics
from estimator_compat.mode_keys import ModeKeys

_SessionRunHook = tf.compat.v1.train.SessionRunHook

_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops",
           "export_outputs", "training_chief_hooks", "training_hooks",
           "scaffold", "evaluation_hooks", "prediction_hooks")


def _is_tensor(value: Any) -> bool:
  return isinstance(value, (tf.Tensor, tf.Variable, tf.SparseTensor)) or (
      tf.is_tensor(value))


def _check_loss(loss: Any, mode: str) -> Any:
  """Returns `loss` as a scalar tensor, or raises with the fix."""
  if not _is_tensor(loss):
    raise TypeError(
        f"EstimatorSpec(mode={mode!r}): loss must be a scalar Tensor, got "
        f"{type(loss).__name__}. Fix: return a tensor such as "
        "tf.reduce_mean(per_example_loss).")
  shape = loss.shape
  if shape.rank is not None and shape.rank > 0:
    if shape.num_elements() == 1:
      return tf.reshape(loss, [])
    raise ValueError(
        f"EstimatorSpec(mode={mode!r}): loss must be a scalar, but it has shape "
        f"{shape}. A per-example loss cannot be minimized as one number. Fix: "
        "reduce it, e.g. loss = tf.reduce_mean(loss), or use a v1 loss from "
        "tf.compat.v1.losses, which reduces by default.")
  return loss


def _check_hooks(hooks: Any, field: str) -> tuple:
  hooks = tuple(hooks or ())
  for hook in hooks:
    if not isinstance(hook, _SessionRunHook):
      raise TypeError(
          f"EstimatorSpec.{field} must hold SessionRunHook instances, got "
          f"{type(hook).__name__}. Fix: subclass tf.estimator.SessionRunHook.")
  return hooks


def _check_metrics(eval_metric_ops: Optional[Mapping[str, Any]]) -> dict:
  metrics = dict(eval_metric_ops or {})
  for name, value in metrics.items():
    if not isinstance(name, str):
      raise TypeError(f"eval_metric_ops keys must be strings, got {name!r}.")
    if isinstance(value, tf.keras.metrics.Metric):
      # As the Estimator: a (value, update op) pair from here on.
      metrics[name] = keras_metrics.value_and_update(name, value)
      continue
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
      raise TypeError(
          f"eval_metric_ops[{name!r}] must be a (value_op, update_op) pair as "
          f"returned by tf.compat.v1.metrics.*, or a tf.keras Metric; got "
          f"{type(value).__name__}.")
  return metrics


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
  """Ops and objects returned from a `model_fn`, as in `tf.estimator`.

  Validation happens here, at construction, so that a malformed spec fails
  before any session starts or checkpoint is written.
  """

  def __new__(cls,
              mode: str,
              predictions: Any = None,
              loss: Any = None,
              train_op: Any = None,
              eval_metric_ops: Optional[Mapping[str, Any]] = None,
              export_outputs: Optional[Mapping[str, Any]] = None,
              training_chief_hooks: Any = None,
              training_hooks: Any = None,
              scaffold: Optional[tf.compat.v1.train.Scaffold] = None,
              evaluation_hooks: Any = None,
              prediction_hooks: Any = None) -> "EstimatorSpec":
    if mode not in ModeKeys.ALL:
      raise ValueError(
          f"EstimatorSpec: mode must be one of {ModeKeys.ALL}, got {mode!r}. "
          "Fix: pass the `mode` argument your model_fn received.")
    if mode == ModeKeys.TRAIN:
      if loss is None:
        raise ValueError(
            "EstimatorSpec(mode='train') is missing `loss`. Fix: return "
            "EstimatorSpec(mode, loss=loss, train_op=train_op).")
      if train_op is None:
        raise ValueError(
            "EstimatorSpec(mode='train') is missing `train_op`. Fix: return "
            "train_op=optimizer.minimize(loss, global_step="
            "tf.compat.v1.train.get_global_step()).")
    if mode == ModeKeys.EVAL and loss is None:
      raise ValueError(
          "EstimatorSpec(mode='eval') is missing `loss`. Fix: compute the loss "
          "in EVAL mode too and return EstimatorSpec(mode, loss=loss, ...).")
    if mode == ModeKeys.PREDICT and predictions is None:
      raise ValueError(
          "EstimatorSpec(mode='infer') is missing `predictions`. Fix: return "
          "EstimatorSpec(mode, predictions={'name': tensor}) when "
          "mode == ModeKeys.PREDICT.")
    if loss is not None:
      loss = _check_loss(loss, mode)
    if train_op is not None and not isinstance(
        train_op, (tf.Operation, tf.Tensor, tf.Variable)):
      raise TypeError(
          f"EstimatorSpec: train_op must be an Operation or Tensor, got "
          f"{type(train_op).__name__}. Fix: return optimizer.minimize(...) or "
          "tf.group(...).")
    if predictions is None:
      predictions = {}
    elif not (_is_tensor(predictions) or isinstance(predictions, dict)):
      raise TypeError(
          f"EstimatorSpec: predictions must be a Tensor or a dict of Tensors, "
          f"got {type(predictions).__name__}.")
    if isinstance(predictions, dict):
      for key, value in predictions.items():
        if not _is_tensor(value):
          raise TypeError(
              f"EstimatorSpec: predictions[{key!r}] must be a Tensor, got "
              f"{type(value).__name__}.")
    if scaffold is not None and not isinstance(
        scaffold, tf.compat.v1.train.Scaffold):
      raise TypeError(
          f"EstimatorSpec: scaffold must be a tf.compat.v1.train.Scaffold, got "
          f"{type(scaffold).__name__}.")
    return super().__new__(
        cls,
        mode=mode,
        predictions=predictions,
        loss=loss,
        train_op=train_op,
        eval_metric_ops=_check_metrics(eval_metric_ops),
        export_outputs=dict(export_outputs) if export_outputs else None,
        training_chief_hooks=_check_hooks(training_chief_hooks,
                                          "training_chief_hooks"),
        training_hooks=_check_hooks(training_hooks, "training_hooks"),
        scaffold=scaffold or tf.compat.v1.train.Scaffold(),
        evaluation_hooks=_check_hooks(evaluation_hooks, "evaluation_hooks"),
        prediction_hooks=_check_hooks(prediction_hooks, "prediction_hooks"))

  def _replace(self, **kwds) -> "EstimatorSpec":
    values = self._asdict()
    values.update(kwds)
    return EstimatorSpec(**values)
