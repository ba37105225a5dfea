"""`tf.estimator.add_metrics`: an Estimator with more eval metrics."""

from typing import Any, Callable, Dict

from estimator_compat import estimator as estimator_lib
from estimator_compat.front import fn_args
from estimator_compat import mode_keys

_VALID_ARGS = frozenset(("features", "labels", "predictions", "config"))


def _check_metric_fn(metric_fn: Callable[..., Dict[str, Any]]) -> None:
  invalid = sorted(set(fn_args.fn_args(metric_fn)) - _VALID_ARGS)
  if invalid:
    raise ValueError(
        f"metric_fn ({metric_fn}) has following not expected args: "
        f"{invalid}. Fix: metric_fn may take only features, labels, "
        "predictions and config.")


def add_metrics(estimator: Any,
                metric_fn: Callable[..., Dict[str, Any]]) -> Any:
  """A new Estimator, same model_dir and config, evaluating more metrics.

  In EVAL mode, `metric_fn` is called with those of features, labels,
  predictions and config it declares; the metrics it returns (Keras Metric
  objects or (value, update_op) pairs) are added to the model's, replacing
  any of the same name.

  Raises:
    ValueError: metric_fn takes another argument.
  """
  _check_metric_fn(metric_fn)
  model_fn = estimator.model_fn

  def new_model_fn(features, labels, mode, config):
    spec = model_fn(features, labels, mode, config)
    if mode != mode_keys.ModeKeys.EVAL:
      return spec
    available = {"features": features, "labels": labels,
                 "predictions": spec.predictions, "config": config}
    declared = fn_args.fn_args(metric_fn)
    new_metrics = metric_fn(
        **{k: v for k, v in available.items() if k in declared})
    metrics = dict(spec.eval_metric_ops or {})
    metrics.update(new_metrics)
    return spec._replace(eval_metric_ops=metrics)

  return estimator_lib.Estimator(
      model_fn=new_model_fn, model_dir=estimator.model_dir,
      config=estimator.config,
      warm_start_from=estimator._warm_start_settings)  # pylint: disable=protected-access
