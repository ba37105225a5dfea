"""TPUEstimator(use_tpu=True): the real one's checks, then the refusal.

estimator_compat drives no TPU. A TPUEstimator built with use_tpu=True (the
default) is still built, with the checks the real TPUEstimator made of its
arguments for a TPU, so its configuration can be read and exported on CPU;
train(), predict() and evaluate() on the TPU make the checks the real one
made before it needed the TPU (steps, batch sizes, model_fn's params, and in
a throwaway graph the input's static shapes, model_fn's labels and the
spec's hooks and predictions), each with the real one's wording first, and
then refuse with the fix (use_tpu=False). evaluate() with eval_on_tpu=False ran on CPU/GPU there and runs here.
"""

from typing import Any, Callable, Optional

import tensorflow as tf

from estimator_compat.front.fn_args import call_with_declared_args, fn_args
from estimator_compat.front.input_adapter import split_input
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import (ModelSetup, invoke_input_fn,
                                                 own_copies)
from estimator_compat.tpu import tpu_config as tpu_config_lib
from estimator_compat.tpu.tpu_config import check_positive_integer


def no_tpu_error() -> ValueError:
  """The refusal of a call that needs a TPU."""
  return ValueError(
      "TPUEstimator(use_tpu=True) runs the model on a TPU, and "
      "estimator_compat runs TPUEstimator programs only on CPU/GPU (no TPU "
      "is driven from here). Fix: pass use_tpu=False (e.g. --use_tpu=False) "
      "to train, evaluate and predict on CPU/GPU as TPUEstimator did "
      "without a TPU; for TPUs, migrate to tf.distribute.TPUStrategy.")


def needs_params_error(what: str, fn: Any) -> ValueError:
  return ValueError(
      f"{what} ({fn}) does not include params argument, required by "
      "TPUEstimator to pass batch size as params['batch_size']. Fix: add "
      f"`params` to the {what} signature.")


def check_constructor(config: tpu_config_lib.RunConfig,
                      train_batch_size: Any, eval_batch_size: Any,
                      predict_batch_size: Any,
                      embedding_config_spec: Any) -> None:
  """The real TPUEstimator's checks of its arguments under use_tpu=True.

  Raises:
    ValueError / TypeError: as the real TPUEstimator, then the fix.
  """
  if train_batch_size is None:
    raise ValueError("`train_batch_size` cannot be `None`. Fix: pass "
                     "train_batch_size=N, the global batch size.")
  check_positive_integer(train_batch_size, "train_batch_size")
  tpu = config.tpu_config
  pipeline = tpu.per_host_input_for_training
  if (pipeline == tpu_config_lib.InputPipelineConfig.PER_SHARD_V1 and
      tpu.num_cores_per_replica):
    raise ValueError(
          "Model parallelism only supports per host input for training. "
          "Please adjust TPURunconfig.per_host_input_for_training. Fix: "
          "TPUConfig(per_host_input_for_training=True).")
  if eval_batch_size is not None:
    check_positive_integer(eval_batch_size, "eval_batch_size")
  if predict_batch_size is not None:
    check_positive_integer(predict_batch_size, "predict_batch_size")
  if embedding_config_spec and pipeline not in (
      tpu_config_lib.InputPipelineConfig.PER_HOST_V1,
      tpu_config_lib.InputPipelineConfig.PER_HOST_V2):
    raise ValueError(
        "Only PER_HOST_V1 and PER_HOST_V2 is supported when using TPU "
        f"Embedding; got {pipeline}. Fix: TPUConfig(per_host_input_for_"
        "training=tpu_config.InputPipelineConfig.PER_HOST_V2).")


def check_model_fn_params(model_fn: Optional[Callable[..., Any]]) -> None:
  """model_fn must take `params` (its batch size), as on the TPU."""
  if callable(model_fn) and "params" not in fn_args(model_fn):
    raise needs_params_error("model_fn", model_fn)


def _check_static(value: Any, name: str, mode: str) -> None:
  """The real TPU input check: every input tensor has a static shape (the
  batch dimension excepted in PREDICT, which the TPU input padded)."""
  for tensor in tf.nest.flatten(value):
    if not tf.is_tensor(tensor) or isinstance(tensor, tf.SparseTensor):
      continue
    shape = tensor.shape
    if mode == ModeKeys.PREDICT and shape.rank:
      shape = shape[1:]
    if not shape.is_fully_defined():
      raise ValueError(
          f"The {name} to the model returned by input_fn must have static "
          f"shape. Tensor: {tensor}. Fix: give every dimension a fixed size "
          "(e.g. Dataset.batch(n, drop_remainder=True), fixed padding).")


def _check_spec(spec: Any, mode: str) -> None:
  """The real TPU checks of what model_fn returned."""
  if getattr(spec, "training_chief_hooks", None) and not hasattr(
      spec, "as_estimator_spec"):
    raise ValueError(
        "training_chief_hooks returned by EstimatorSpec is not supported in "
        "TPUEstimator.If you want to pass training hooks, please pass via "
        "training_hooks. Fix: return them as training_hooks.")
  predictions = getattr(spec, "predictions", None)
  if mode == ModeKeys.PREDICT and isinstance(predictions, dict):
    for key, tensor in predictions.items():
      if tf.is_tensor(tensor) and tensor.shape.rank and (
          tensor.shape[0] is None):
        raise ValueError(
            f"The tensor with key ({key}) in TPUEstimatorSpec.predictions "
            f"has dynamic shape (should be static). Tensor: {tensor}. Fix: "
            "give the predictions a fixed batch size.")


def check_graph(setup: ModelSetup, input_fn: Callable[..., Any], mode: str,
                model_fn: Optional[Callable[..., Any]]) -> None:
  """Builds input_fn and model_fn in a throwaway graph for the real TPU
  checks; anything else they raise ends in the refusal (no TPU).

  Raises:
    ValueError: a check failed (the real one's wording, then the fix), or
      the refusal.
  """
  with tf.Graph().as_default():
    try:
      features, labels, _ = split_input(invoke_input_fn(setup, input_fn,
                                                        mode))
    except Exception as error:  # pylint: disable=broad-except
      raise no_tpu_error() from error
    _check_static(features, "features", mode)
    _check_static(labels, "labels", mode)
    if not callable(model_fn):
      return
    if labels is not None and "labels" not in fn_args(model_fn):
      raise ValueError(
          "model_fn does not take labels, but input_fn returns labels. Fix: "
          "add `labels` to the model_fn signature, or return features only "
          "from input_fn.")
    params, config = own_copies(setup)
    if setup.call_params is not None:
      params = setup.call_params.for_model_fn(params, mode, False)
    params["use_tpu"] = True
    try:
      spec = call_with_declared_args(
          model_fn, {"features": features, "labels": labels, "mode": mode,
                     "params": params, "config": config})
    except Exception as error:  # pylint: disable=broad-except
      raise no_tpu_error() from error
    _check_spec(spec, mode)


def check_train_call(steps: Any, max_steps: Any) -> None:
  """train() on the TPU: the real one's checks of steps and max_steps."""
  if steps is None and max_steps is None:
    raise ValueError(
        "For TPU training, one of `steps` or `max_steps` must be set. Cannot "
        "be both `None`. Fix: pass steps=N or max_steps=N.")
  if steps is not None:
    check_positive_integer(steps, "Train steps")
  if max_steps is not None:
    check_positive_integer(max_steps, "Train max_steps")


def check_evaluate_call(steps: Any, eval_batch_size: Optional[int]) -> None:
  """evaluate() on the TPU: the real one's checks of steps and batch size."""
  if steps is None:
    raise ValueError("Evaluate `steps` must be set on TPU. Cannot be `None`. "
                     "Fix: pass steps=N.")
  check_positive_integer(steps, "Eval steps")
  if eval_batch_size is None:
    raise ValueError(
        "eval_batch_size in TPUEstimator constructor cannot be `None` if "
        ".evaluate is running on TPU. Fix: pass eval_batch_size=N.")


def check_predict_call(predict_batch_size: Optional[int]) -> None:
  """predict() on the TPU: the real one's check of the batch size."""
  if predict_batch_size is None:
    raise ValueError(
        "predict_batch_size in TPUEstimator constructor cannot be `None` if "
        ".predict is running on TPU. Fix: pass predict_batch_size=N.")


def refuse(setup: ModelSetup, input_fn: Callable[..., Any], mode: str,
           model_fn: Optional[Callable[..., Any]]) -> None:
  """A call on the TPU after its call checks: model_fn's params and the
  graph checks, then the refusal.

  Raises:
    ValueError: always: a failed check (the real one's wording, then the
      fix), else the refusal (no TPU).
  """
  check_model_fn_params(model_fn)
  check_graph(setup, input_fn, mode, model_fn)
  raise no_tpu_error()
