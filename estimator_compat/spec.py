"""EstimatorSpec: what a model_fn returns, validated as by the Estimator.

Each check raises the Estimator's exception type with its wording, then a
" Fix: ..." sentence. Validation happens at construction, inside model_fn,
so a malformed spec fails before any session starts or checkpoint is written.
"""

import collections
from typing import Any, Mapping, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.saved_model.model_utils import export_utils

from estimator_compat.front import keras_metrics
from estimator_compat.mode_keys import ModeKeys

_SessionRunHook = tf.compat.v1.train.SessionRunHook
_TensorType = tf.__internal__.types.Tensor  # Tensors and variables.

# The key evaluate() reports the mean loss under (the Estimator's name).
LOSS_METRIC_KEY = "loss"

_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops",
           "export_outputs", "training_chief_hooks", "training_hooks",
           "scaffold", "evaluation_hooks", "prediction_hooks")

_OTHER_GRAPH = (
    '{0} with "{1}" must be from the default graph. Possible causes of this '
    "error include: \n\n1) {0} was created outside the context of the default "
    "graph.\n\n2) The object passed through to EstimatorSpec was not created "
    'in the most recent call to "model_fn". Fix: build every tensor the '
    "EstimatorSpec holds inside model_fn, from its features and labels; do "
    "not keep tensors in globals or closures between calls.")


def _graph_of(value: Any) -> Optional[tf.Graph]:
  """The graph of a tensor or op; None for eager values and variables."""
  try:
    return value.graph
  except (AttributeError, RuntimeError, ValueError):
    return None


def _check_graph(value: Any, what: str, name: str) -> None:
  """Rejects a tensor or op of a graph other than the default one."""
  if tf.executing_eagerly():
    return
  graph = _graph_of(value)
  if graph is not None and graph is not tf.compat.v1.get_default_graph():
    raise ValueError(_OTHER_GRAPH.format(what, name))


def _name_of(value: Any) -> str:
  return getattr(value, "name", repr(value))


def _check_train_op(train_op: Any, mode: str) -> Any:
  if train_op is None:
    if mode == ModeKeys.TRAIN:
      raise ValueError(
          "Missing train_op. Fix: in TRAIN mode return EstimatorSpec(mode, "
          "loss=loss, train_op=optimizer.minimize(loss, global_step="
          "tf.compat.v1.train.get_global_step())).")
    return None
  if not isinstance(train_op, (tf.Operation, _TensorType)):
    raise TypeError(
        f"train_op must be Operation or Tensor, given: {train_op}. Fix: "
        "return optimizer.minimize(...) or tf.group(...) as train_op.")
  if isinstance(train_op, tf.Variable) and not tf.executing_eagerly():
    # An assign_add result or a variable: run the op that produced it.
    try:
      op = train_op.op  # Eager variables (function engine) have none.
    except (AttributeError, RuntimeError, ValueError):
      op = None
    train_op = op if op is not None else train_op
  _check_graph(train_op, "train_op", _name_of(train_op))
  return train_op


def _as_scalar_at_run_time(loss: Any) -> Any:
  """`loss` as a scalar; a step whose loss is not one value fails.

  The Estimator's `tf.reshape(loss, [])` failed such a step with an
  InvalidArgumentError about a reshape; this one fails it with the same
  error type, saying what is wrong and the fix. (The value is the sum of the
  one element, behind the check: a failing reshape would race the check,
  as Grappler does not keep it after the assert.)
  """
  if loss.shape.num_elements() == 1:
    return tf.reshape(loss, [])
  check = tf.debugging.assert_equal(
      tf.size(loss), 1, message=(
          "Loss must be scalar: the model_fn's loss holds one value per "
          "example (shape %s) and this batch has more than one. Fix: reduce "
          "it, e.g. loss = tf.reduce_mean(loss), or use a v1 loss from "
          "tf.compat.v1.losses, which reduces by default." % loss.shape),
      summarize=1, name="loss_is_scalar")
  with tf.control_dependencies([check]):
    return tf.identity(tf.reduce_sum(loss), name="scalar_loss")


def _check_loss(loss: Any, mode: str) -> Any:
  if loss is None:
    if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
      raise ValueError(
          f"Missing loss. Fix: compute the loss in {mode.upper()} mode too "
          "and return EstimatorSpec(mode, loss=loss, ...).")
    return None
  if not isinstance(loss, _TensorType):
    raise TypeError(
        f"loss must be Tensor, given: {loss}. Fix: return a scalar tensor "
        "such as tf.reduce_mean(per_example_loss).")
  shape = loss.shape
  if shape.num_elements() not in (None, 1):
    raise ValueError(
        f"Loss must be scalar, given: {loss}. A per-example loss cannot be "
        "minimized as one number. Fix: reduce it, e.g. loss = "
        "tf.reduce_mean(loss), or use a v1 loss from tf.compat.v1.losses, "
        "which reduces by default.")
  if shape.rank is not None and shape.rank > 0:
    # As the Estimator: a shape that may hold one value ((None,), (1,),
    # (None, 1)) is reshaped to a scalar; at run time a batch whose loss
    # holds more than one value fails the step (see decisions.md).
    loss = _as_scalar_at_run_time(loss)
  _check_graph(loss, "loss", _name_of(loss))
  return loss


def _check_predictions(predictions: Any, mode: str) -> Any:
  if predictions is None:
    if mode == ModeKeys.PREDICT:
      raise ValueError(
          "Missing predictions. Fix: in PREDICT mode return "
          "EstimatorSpec(mode, predictions={'name': tensor}).")
    return {}
  fix = "Fix: return a Tensor or a dict of name to Tensor."
  if isinstance(predictions, dict):
    for key, value in predictions.items():
      if not isinstance(value, _TensorType):
        raise TypeError(
            f"predictions[{key}] must be Tensor, given: {value}. {fix}")
      _check_graph(value, "prediction values", f"{key}: {_name_of(value)}")
    return predictions
  if not isinstance(predictions, _TensorType):
    raise TypeError(f"predictions must be Tensor, given: {predictions}. {fix}")
  _check_graph(predictions, "prediction values", _name_of(predictions))
  return predictions


def _check_export_outputs(export_outputs: Any, predictions: Any,
                          mode: str) -> Any:
  """In PREDICT mode: checked, with a default `serving_default` output."""
  if mode != ModeKeys.PREDICT:
    return export_outputs
  try:
    return export_utils.get_export_outputs(export_outputs, predictions)
  except TypeError as e:
    raise TypeError(
        f"{e} Fix: export_outputs maps signature names to "
        "tf.estimator.export.PredictOutput, ClassificationOutput or "
        "RegressionOutput objects.") from None
  except ValueError as e:
    if export_outputs is None:  # The default PredictOutput(predictions).
      fix = ("give predictions string keys and Tensor values, or pass "
             "export_outputs")
    else:
      fix = ("name one of them 'serving_default' "
             "(tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY), or give "
             "only one")
    raise ValueError(f"{e} Fix: {fix}.") from None


def _check_hooks(hooks: Any) -> tuple:
  hooks = tuple(hooks or ())
  for hook in hooks:
    if not isinstance(hook, _SessionRunHook):
      raise TypeError(
          f"All hooks must be SessionRunHook instances, given: {hook}. Fix: "
          "subclass tf.estimator.SessionRunHook.")
  return hooks


def _check_metrics(eval_metric_ops: Optional[Mapping[str, Any]]) -> dict:
  if eval_metric_ops is None:
    return {}
  if not isinstance(eval_metric_ops, dict):
    raise TypeError(
        f"eval_metric_ops must be a dict, given: {eval_metric_ops}. Fix: "
        "return {'name': tf.compat.v1.metrics.mean(values)}.")
  metrics = dict(eval_metric_ops)
  for key, value in metrics.items():
    if isinstance(value, tf.keras.metrics.Metric):
      # As the Estimator: updates first, then their graph and that of the
      # variables the result reads.
      for item in (keras_metrics.updates_of(key, value) +
                   list(value.variables)):
        _check_graph(item, "eval_metric_ops", f"{key}: {_name_of(item)}")
      # As the Estimator: a (value, update op) pair from here on.
      metrics[key] = keras_metrics.value_and_update(key, value)
      continue
    if not isinstance(value, tuple) or len(value) != 2:
      raise TypeError(
          "Values of eval_metric_ops must be (metric_value, update_op) "
          f"tuples, given: {value} for key: {key}. Fix: use the pair a "
          "tf.compat.v1.metrics function returns, or a tf.keras Metric.")
    for item in tf.nest.flatten(value):
      _check_graph(item, "eval_metric_ops", f"{key}: {_name_of(item)}")
  return metrics


def _check_scaffold(scaffold: Any) -> tf.compat.v1.train.Scaffold:
  scaffold = scaffold or tf.compat.v1.train.Scaffold()
  if not isinstance(scaffold, tf.compat.v1.train.Scaffold):
    raise TypeError(
        f"scaffold must be tf.train.Scaffold. Given: {scaffold}. Fix: pass "
        "a tf.compat.v1.train.Scaffold or None.")
  return scaffold


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
  """Ops and objects returned from a `model_fn`, as in `tf.estimator`.

  Required by mode: TRAIN `loss` and `train_op`, EVAL `loss`, PREDICT
  `predictions`. In PREDICT mode `export_outputs` gets a default
  `serving_default` PredictOutput of the predictions.
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
    """Validates the fields; see the class docstring.

    Raises:
      ValueError: a field the mode requires is missing, the loss is not a
        scalar, a tensor is from another graph, or export_outputs have no
        default; also an unknown mode.
      TypeError: a field has the wrong type.
    """
    # mode=None is accepted, as by the Estimator: the Estimator's call of
    # model_fn validates the spec again for the mode it called it in.
    if mode is not None and mode not in ModeKeys.ALL:
      raise ValueError(
          f"EstimatorSpec: mode must be one of {ModeKeys.ALL}, got {mode!r}. "
          "Fix: pass the `mode` argument your model_fn received.")
    train_op = _check_train_op(train_op, mode)
    loss = _check_loss(loss, mode)
    predictions = _check_predictions(predictions, mode)
    return super().__new__(  # type: ignore[call-arg]  # fields from a variable
        cls,
        mode=mode,
        predictions=predictions,
        loss=loss,
        train_op=train_op,
        eval_metric_ops=_check_metrics(eval_metric_ops),
        export_outputs=_check_export_outputs(export_outputs, predictions,
                                             mode),
        training_chief_hooks=_check_hooks(training_chief_hooks),
        training_hooks=_check_hooks(training_hooks),
        scaffold=_check_scaffold(scaffold),
        evaluation_hooks=_check_hooks(evaluation_hooks),
        prediction_hooks=_check_hooks(prediction_hooks))

  def _replace(self, **kwds) -> "EstimatorSpec":
    """A validated copy with fields replaced; the mode cannot change."""
    if "mode" in kwds and kwds["mode"] != self.mode:
      raise ValueError(
          "mode of EstimatorSpec cannot be changed. Fix: build a new "
          "EstimatorSpec for the other mode.")
    values = self._asdict()
    values.update(kwds)
    return EstimatorSpec(**values)
