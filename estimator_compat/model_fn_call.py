"""One place that calls the legacy input_fn and model_fn for a mode."""

import dataclasses
from typing import Any, Callable, Optional

import tensorflow as tf

from estimator_compat import tf_logging as logging
from estimator_compat.fn_args import fn_args, call_with_declared_args
from estimator_compat.input_adapter import split_input
from estimator_compat.run_config import RunConfig
from estimator_compat.spec import EstimatorSpec

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")


@dataclasses.dataclass(frozen=True)
class ModelSetup:
  """What every engine needs to build a model: fixed for an Estimator."""
  model_fn: Callable[..., Any]
  model_dir: str
  config: RunConfig
  params: dict
  warm_start: Optional[Any] = None


def check_model_fn(model_fn: Callable[..., Any],
                   params: Optional[dict]) -> None:
  """Validates a model_fn's signature when the Estimator is built.

  Raises:
    TypeError: model_fn is not callable.
    ValueError: it lacks `features`, takes unknown arguments, or ignores params.
  """
  if not callable(model_fn):
    raise TypeError(f"model_fn must be callable, got {type(model_fn).__name__}.")
  args = fn_args(model_fn)
  if "features" not in args:
    raise ValueError(
        f"model_fn {getattr(model_fn, '__name__', model_fn)} must take an "
        f"argument named 'features'; it takes {list(args)}. Fix: "
        "def model_fn(features, labels, mode, params, config).")
  unknown = [a for a in args if a not in _MODEL_FN_ARGS and a != "self"]
  if unknown:
    raise ValueError(
        f"model_fn takes unknown argument(s) {unknown}; it may take only "
        f"{list(_MODEL_FN_ARGS)}. Fix: bind extra values with "
        "functools.partial or pass them in params.")
  if params is not None and "params" not in args:
    raise ValueError(
        "Estimator was given params but model_fn does not take a 'params' "
        "argument. Fix: add `params` to the model_fn signature.")


def invoke_input_fn(setup: ModelSetup, input_fn: Callable[..., Any],
                    mode: str, input_context: Any = None) -> Any:
  """Calls input_fn on the CPU with the arguments it declares; its result.

  `input_context` (a tf.distribute.InputContext under a strategy) is passed
  when input_fn declares it, as the Estimator did.

  Raises:
    TypeError: input_fn is not callable (e.g. its result was passed).
  """
  if not callable(input_fn):
    raise TypeError(
        f"input_fn must be a callable that returns the input, got "
        f"{type(input_fn).__name__}. Fix: pass the function itself, not its "
        "result (input_fn=train_input_fn, not train_input_fn()).")
  with tf.device("/cpu:0"):
    return call_with_declared_args(
        input_fn, {"mode": mode, "params": setup.params, "config": setup.config,
                   "input_context": input_context})


def call_input_fn(setup: ModelSetup, input_fn: Callable[..., Any], mode: str):
  """Calls input_fn in a graph; returns (features, labels, hooks)."""
  with tf.device("/cpu:0"):
    result = invoke_input_fn(setup, input_fn, mode)
    return split_input(result, getattr(input_fn, "__name__", "input_fn"))


def call_model_fn(setup: ModelSetup, features: Any, labels: Any,
                  mode: str) -> EstimatorSpec:
  """Calls model_fn and checks that it returned an EstimatorSpec.

  Raises:
    ValueError: input_fn produced labels the model_fn does not take.
    TypeError: model_fn returned something other than an EstimatorSpec.
  """
  args = fn_args(setup.model_fn)
  if labels is not None and "labels" not in args:
    raise ValueError(
        "input_fn returned labels but model_fn does not take a 'labels' "
        "argument. Fix: add `labels` to the model_fn signature, or return "
        "features only from input_fn.")
  logging.info("Calling model_fn.")
  spec = call_with_declared_args(
      setup.model_fn, {"features": features, "labels": labels, "mode": mode,
                       "params": setup.params, "config": setup.config})
  if not isinstance(spec, EstimatorSpec):
    raise TypeError(
        f"model_fn must return an EstimatorSpec, got {type(spec).__name__}. "
        "Fix: return tf.estimator.EstimatorSpec(mode, predictions=..., "
        "loss=..., train_op=...).")
  logging.info("Done calling model_fn.")
  return spec
