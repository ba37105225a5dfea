"""One place that calls the legacy input_fn and model_fn for a mode."""

import copy
import dataclasses
from typing import Any, Callable, Optional, Protocol, Tuple

import tensorflow as tf

from estimator_compat.front import tf_logging as logging
from estimator_compat.front.configuration import Choices
from estimator_compat.front.fn_args import fn_args, call_with_declared_args
from estimator_compat.front.input_adapter import check_pair, split_input
from estimator_compat.run_config import RunConfig
from estimator_compat.spec import EstimatorSpec

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")


class CallParams(Protocol):
  """The params one call of input_fn or model_fn gets, when they vary.

  TPUEstimator passes a different `params['batch_size']` in each mode.
  """

  def for_input_fn(self, params: dict, mode: str,
                   input_fn: Callable[..., Any]) -> dict:
    """The params for a call of `input_fn` in `mode` (may refuse it)."""

  def for_model_fn(self, params: dict, mode: str, exporting: bool) -> dict:
    """The params for a call of model_fn in `mode` (`exporting`: export)."""


@dataclasses.dataclass(frozen=True)
class ModelSetup:
  """What every engine needs to build a model: fixed for an Estimator call.

  `choices` are the call's engine and strategy flags, resolved once in the
  front (front/configuration.py): deeper modules read them here, never from
  the environment or RunConfig.engine. `call_params`, when set, gives the
  params of each call (else `params`).
  """
  model_fn: Callable[..., Any]
  model_dir: str
  config: RunConfig
  params: dict
  choices: Choices
  warm_start: Optional[Any] = None
  call_params: Optional[CallParams] = None


def check_model_fn(model_fn: Callable[..., Any],
                   params: Optional[dict]) -> None:
  """Validates a model_fn's signature when the Estimator is built.

  Raises:
    ValueError: model_fn is None, lacks `features`, takes unknown arguments,
      or ignores params.
    TypeError: model_fn is not callable.
  """
  if model_fn is None:
    raise ValueError(
        "model_fn must be provided to Estimator. Fix: pass "
        "model_fn=a function(features, labels, mode, params, config) that "
        "returns a tf.estimator.EstimatorSpec.")
  if not callable(model_fn):
    raise TypeError(f"model_fn must be callable, got {type(model_fn).__name__}.")
  args = fn_args(model_fn)
  if "features" not in args:
    raise ValueError(
        f"model_fn ({model_fn}) must include features argument. It takes "
        f"{list(args)}. Fix: def model_fn(features, labels, mode, params, "
        "config).")
  if params is not None and "params" not in args:
    raise ValueError(
        f"model_fn ({model_fn}) does not include params argument, but params "
        f"({params}) is passed to Estimator. Fix: add `params` to the "
        "model_fn signature, or do not pass params.")
  if params is None and "params" in args:
    logging.warning(
        "Estimator's model_fn (%s) includes params argument, but params are "
        "not passed to Estimator.", model_fn)
  unknown = [a for a in args if a not in _MODEL_FN_ARGS and a != "self"]
  if unknown:
    raise ValueError(
        f"model_fn ({model_fn}) has following not expected args: {unknown}. "
        f"It may take only {list(_MODEL_FN_ARGS)}. Fix: bind extra values "
        "with functools.partial or pass them in params.")


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
  params, config = own_copies(setup)
  if setup.call_params is not None:
    params = setup.call_params.for_input_fn(params, mode, input_fn)
  with tf.device("/cpu:0"):
    result = call_with_declared_args(
        input_fn, {"mode": mode, "params": params, "config": config,
                   "input_context": input_context})
  check_pair(result, getattr(input_fn, "__name__", "input_fn"))
  return result


def own_copies(setup: ModelSetup) -> Tuple[dict, Any]:
  """Each input_fn or model_fn call's own params and config.

  Deep copies, as the Estimator passed its `params` and `config` properties:
  what one call changes in them (`params.setdefault(...)`, a counter) is
  not seen by the next call. (RunConfig's copy shares its strategies.)
  """
  return copy.deepcopy(setup.params), copy.deepcopy(setup.config)


def call_input_fn(setup: ModelSetup, input_fn: Callable[..., Any], mode: str):
  """Calls input_fn in a graph; returns (features, labels, hooks)."""
  with tf.device("/cpu:0"):
    result = invoke_input_fn(setup, input_fn, mode)
    return split_input(result, getattr(input_fn, "__name__", "input_fn"))


def call_model_fn(setup: ModelSetup, features: Any, labels: Any,
                  mode: str, exporting: bool = False) -> EstimatorSpec:
  """Calls model_fn and checks that it returned an EstimatorSpec.

  `exporting` is True when the call builds a graph for export_saved_model.

  A spec built with `mode=None` (the Estimator accepted one) is validated
  again for the mode model_fn was called in, and carries that mode.

  Raises:
    ValueError: input_fn produced labels the model_fn does not take, or
      model_fn returned something other than an EstimatorSpec.
  """
  args = fn_args(setup.model_fn)
  if labels is not None and "labels" not in args:
    raise ValueError(
        "model_fn does not take labels, but input_fn returns labels. Fix: "
        "add `labels` to the model_fn signature, or return features only "
        "from input_fn.")
  params, config = own_copies(setup)
  if setup.call_params is not None:
    params = setup.call_params.for_model_fn(params, mode, exporting)
  logging.info("Calling model_fn.")
  spec = call_with_declared_args(
      setup.model_fn, {"features": features, "labels": labels, "mode": mode,
                       "params": params, "config": config})
  if not isinstance(spec, EstimatorSpec):
    raise ValueError(
        "model_fn should return an EstimatorSpec. It returned "
        f"{type(spec).__name__}. Fix: return tf.estimator.EstimatorSpec("
        "mode, predictions=..., loss=..., train_op=...).")
  logging.info("Done calling model_fn.")
  if spec.mode is None:
    fields = spec._asdict()
    fields["mode"] = mode
    if isinstance(fields["predictions"], dict) and not fields["predictions"]:
      fields["predictions"] = None
    spec = EstimatorSpec(**fields)
  return spec


def bound_model_fn(setup: ModelSetup) -> Callable[..., EstimatorSpec]:
  """model_fn as `Estimator.model_fn` gives it: params bound.

  Returns:
    `model_fn(features, labels, mode, config)`, calling the user's model_fn
    with the arguments it declares (params from the Estimator).
  """

  def public_model_fn(features, labels, mode, config):
    return call_model_fn(dataclasses.replace(setup, config=config), features,
                         labels, mode)

  return public_model_fn
