"""TPUEstimator(use_tpu=True): the real one's checks, then the refusal.

estimator_compat drives no TPU. A TPUEstimator built with use_tpu=True (the
default) is still built, with the checks the real TPUEstimator made of its
arguments for a TPU, so its configuration can be read and exported on CPU;
train(), predict() and evaluate() on the TPU make the checks the real one
made before it needed the TPU (steps, batch sizes, model_fn's params), each
with the real one's wording first, and then refuse with the fix (use_tpu=
False). evaluate() with eval_on_tpu=False ran on CPU/GPU there and runs here.
"""

from typing import Any, Callable, Optional

from estimator_compat.fn_args import fn_args
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


def refuse_train(steps: Any, max_steps: Any,
                 model_fn: Optional[Callable[..., Any]]) -> None:
  """train() on the TPU: the real one's step checks, then the refusal.

  Raises:
    ValueError / TypeError: as the real TPUEstimator, then the fix; else
      the refusal (no TPU).
  """
  if steps is None and max_steps is None:
    raise ValueError(
        "For TPU training, one of `steps` or `max_steps` must be set. Cannot "
        "be both `None`. Fix: pass steps=N or max_steps=N.")
  if steps is not None:
    check_positive_integer(steps, "Train steps")
  if max_steps is not None:
    check_positive_integer(max_steps, "Train max_steps")
  check_model_fn_params(model_fn)
  raise no_tpu_error()


def refuse_evaluate(steps: Any, eval_batch_size: Optional[int],
                    model_fn: Optional[Callable[..., Any]]) -> None:
  """evaluate() on the TPU: the real one's checks, then the refusal."""
  if steps is None:
    raise ValueError("Evaluate `steps` must be set on TPU. Cannot be `None`. "
                     "Fix: pass steps=N.")
  check_positive_integer(steps, "Eval steps")
  if eval_batch_size is None:
    raise ValueError(
        "eval_batch_size in TPUEstimator constructor cannot be `None` if "
        ".evaluate is running on TPU. Fix: pass eval_batch_size=N.")
  check_model_fn_params(model_fn)
  raise no_tpu_error()


def refuse_predict(predict_batch_size: Optional[int],
                   model_fn: Optional[Callable[..., Any]]) -> None:
  """predict() on the TPU: the real one's checks, then the refusal."""
  if predict_batch_size is None:
    raise ValueError(
        "predict_batch_size in TPUEstimator constructor cannot be `None` if "
        ".predict is running on TPU. Fix: pass predict_batch_size=N.")
  check_model_fn_params(model_fn)
  raise no_tpu_error()
