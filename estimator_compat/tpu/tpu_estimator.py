"""TPUEstimator with `use_tpu=False`: a TPU program on CPU/GPU.

As the real TPUEstimator did without a TPU: `params['batch_size']` is the
mode's batch size (`train_batch_size`, `eval_batch_size`,
`predict_batch_size`) for both input_fn and model_fn (none when
exporting), `params['use_tpu']` is False for model_fn, a TPUEstimatorSpec
becomes an EstimatorSpec, and an ExamplesPerSecondHook replaces the
Estimator's step counter. estimator_compat does not drive TPUs: with
`use_tpu=True` the estimator is built and exports, and its calls on the TPU
fail after the real one's checks (on_tpu.py).
"""

import dataclasses
import enum
import math
from typing import Any, Callable, Dict, Optional

from estimator_compat.front import tf_logging as logging
from estimator_compat.estimator import Estimator, check_train_steps
from estimator_compat.front.fn_args import call_with_declared_args, fn_args
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import check_model_fn
from estimator_compat.tpu import on_tpu
from estimator_compat.tpu import tpu_config as tpu_config_lib
from estimator_compat.tpu.tpu_estimator_spec import (ExamplesPerSecondHook,
                                                     TPUEstimatorSpec)

BATCH_SIZE_KEY = "batch_size"
USE_TPU_KEY = "use_tpu"
CTX_KEY = "context"
RESERVED_PARAMS_KEYS = [BATCH_SIZE_KEY, CTX_KEY]


class ExportSavedModelApiVersion(enum.Enum):
  V1 = 1
  V2 = 2


@dataclasses.dataclass(frozen=True)
class BatchSizeParams:
  """The params of each call: the mode's batch size added (CallParams).

  Attributes:
    batch_sizes: ModeKeys value -> global batch size (None: not set).
    export_to_cpu: TPUEstimator's export_to_cpu.
    export_to_tpu: TPUEstimator's export_to_tpu.
  """
  batch_sizes: Dict[str, Optional[int]]
  export_to_cpu: bool
  export_to_tpu: bool

  def _with_batch_size(self, params: dict, mode: str) -> dict:
    """Sets the batch size in `params`: the call's own copy (own_copies)."""
    batch_size = self.batch_sizes.get(mode)
    if batch_size is not None:
      params[BATCH_SIZE_KEY] = batch_size
    return params

  def for_input_fn(self, params: dict, mode: str,
                   input_fn: Callable[..., Any]) -> dict:
    """params + the mode's batch size; input_fn must take params.

    Raises:
      ValueError: input_fn does not take `params`.
    """
    if "params" not in fn_args(input_fn):
      raise on_tpu.needs_params_error("input_fn", input_fn)
    return self._with_batch_size(params, mode)

  def for_model_fn(self, params: dict, mode: str, exporting: bool) -> dict:
    """params + batch size (not when exporting) + use_tpu=False.

    Raises:
      ValueError: exporting with export_to_cpu=False.
    """
    if exporting:
      if not self.export_to_cpu:
        raise ValueError(
            "TPUEstimator(export_to_cpu=False) exports only a TPU MetaGraph, "
            "which estimator_compat does not write (it runs without a TPU). "
            "Fix: export_to_cpu=True.")
      if self.export_to_tpu:
        logging.info(
            "TPUEstimator: export_to_tpu=True is ignored (no TPU MetaGraph "
            "is written without a TPU); exporting the CPU MetaGraph.")
    else:
      params = self._with_batch_size(params, mode)
    params[USE_TPU_KEY] = False
    return params


def _tpu_model_fn(model_fn: Callable[..., Any],
                  log_every_n_steps: Optional[int],
                  log_every_n_secs: Optional[float],
                  batch_sizes: Dict[str, Optional[int]]) -> Callable[..., Any]:
  """The Estimator model_fn: calls `model_fn`, converts its spec."""

  def model_fn_on_cpu(features, labels, mode, params, config):
    if labels is not None and "labels" not in fn_args(model_fn):
      raise ValueError(
          "model_fn does not take labels, but input_fn returns labels. Fix: "
          "add `labels` to the model_fn signature, or return features only "
          "from input_fn.")
    logging.info("Running %s on CPU/GPU", mode)
    spec = call_with_declared_args(
        model_fn, {"features": features, "labels": labels, "mode": mode,
                   "params": params, "config": config})
    if isinstance(spec, TPUEstimatorSpec):
      spec = spec.as_estimator_spec()
    if mode == ModeKeys.TRAIN and (log_every_n_steps is not None or
                                   log_every_n_secs is not None):
      hook = ExamplesPerSecondHook(
          batch_sizes.get(ModeKeys.TRAIN),
          every_n_steps=log_every_n_steps, every_n_secs=log_every_n_secs,
          output_dir=config.model_dir if config.save_summary_steps else None)
      spec = spec._replace(training_hooks=tuple(spec.training_hooks) + (hook,))
    return spec

  return model_fn_on_cpu


def _log_cadence(config: tpu_config_lib.RunConfig):
  """(every_n_steps, every_n_secs) of the ExamplesPerSecondHook.

  As the real TPUEstimator: a step-count iterations_per_loop divides
  log_step_count_steps (rounded up); a duration logs at that period.
  """
  loop = tpu_config_lib.parse_iterations_per_loop(
      config.tpu_config.iterations_per_loop)
  if loop.unit == "seconds":
    return None, loop.value
  if config.log_step_count_steps is None:
    return None, None
  return int(math.ceil(config.log_step_count_steps / loop.value)), None


class TPUEstimator(Estimator):
  """The real TPUEstimator's constructor; it runs with `use_tpu=False`.

  See the module docstring. Arguments that describe TPU hardware
  (`batch_axis`, `export_saved_model_api_version`) are accepted and have
  nothing to do on CPU/GPU; `eval_on_tpu=False` lets a `use_tpu=True`
  estimator evaluate on CPU/GPU, as the real one did. An `embedding_config_spec`
  is checked and then, as TF 2.15 did without a TPU, not used: its TPU
  embedding columns are ordinary embedding columns in model_fn, trained by
  the model's optimizer.
  """

  def __init__(self,
               model_fn: Optional[Callable[..., Any]] = None,
               model_dir: Optional[str] = None,
               config: Optional[tpu_config_lib.RunConfig] = None,
               params: Optional[Dict[str, Any]] = None,
               use_tpu: bool = True,
               train_batch_size: Optional[int] = None,
               eval_batch_size: Optional[int] = None,
               predict_batch_size: Optional[int] = None,
               batch_axis: Any = None,
               eval_on_tpu: bool = True,
               export_to_tpu: bool = True,
               export_to_cpu: bool = True,
               warm_start_from: Any = None,
               embedding_config_spec: Any = None,
               export_saved_model_api_version: Any = (
                   ExportSavedModelApiVersion.V1)):
    """Builds the TPUEstimator.

    Raises:
      ValueError / TypeError: the real one's `use_tpu=True` checks (batch
        sizes, model parallelism), no `tpu.RunConfig`, reserved keys in
        params, an embedding_config_spec with 'mod' partitioning, or
        model_fn without `params`.
    """
    del batch_axis  # TPU input sharding.
    if config is None or not isinstance(config, tpu_config_lib.RunConfig):
      raise ValueError(
          "`config` must be provided with type `tpu_config.RunConfig`. Fix: "
          "config=tf.compat.v1.estimator.tpu.RunConfig(...).")
    if params is not None and any(k in params for k in RESERVED_PARAMS_KEYS):
      raise ValueError(
          f"{RESERVED_PARAMS_KEYS} are reserved keys but existed in params "
          f"{params}. Fix: rename those keys; TPUEstimator sets them.")
    if use_tpu:
      on_tpu.check_constructor(config, train_batch_size, eval_batch_size,
                               predict_batch_size, embedding_config_spec)
    if not (use_tpu and eval_on_tpu) and (
        embedding_config_spec is not None and
        embedding_config_spec.partition_strategy == "mod"):
      raise ValueError(
          "Mod sharding of embedding tables not supported on CPU. Fix: "
          "EmbeddingConfigSpec(partition_strategy='div').")
    if export_saved_model_api_version not in (
        ExportSavedModelApiVersion.V1, ExportSavedModelApiVersion.V2, 1, 2):
      raise ValueError(
          "export_saved_model_api_version should be 1 or 2; got "
          f"{export_saved_model_api_version}.")
    if callable(model_fn):
      check_model_fn(model_fn, params)
      if not use_tpu:
        on_tpu.check_model_fn_params(model_fn)
    every_n_steps, every_n_secs = _log_cadence(config)
    batch_sizes = {ModeKeys.TRAIN: train_batch_size,
                   ModeKeys.EVAL: eval_batch_size,
                   ModeKeys.PREDICT: predict_batch_size}
    super().__init__(
        model_fn=_tpu_model_fn(model_fn, every_n_steps, every_n_secs,
                               batch_sizes) if callable(model_fn) else model_fn,
        model_dir=model_dir,
        config=config.replace(log_step_count_steps=None),
        params=params or {},
        warm_start_from=warm_start_from)
    self._setup = dataclasses.replace(
        self._setup, call_params=BatchSizeParams(
            batch_sizes=batch_sizes, export_to_cpu=export_to_cpu,
            export_to_tpu=export_to_tpu))
    self._use_tpu = bool(use_tpu)
    self._eval_on_tpu = bool(use_tpu and eval_on_tpu)
    self._batch_sizes = batch_sizes
    self._user_model_fn = model_fn

  def train(self, input_fn, hooks=None, steps=None, max_steps=None,
            saving_listeners=None):
    """Estimator.train on CPU/GPU; with use_tpu=True, its checks, then the
    refusal (estimator_compat drives no TPU)."""
    if self._use_tpu:
      check_train_steps(steps, max_steps)
      on_tpu.check_train_call(steps, max_steps)
      on_tpu.refuse(self._setup, input_fn, ModeKeys.TRAIN,
                    self._user_model_fn)
    return super().train(input_fn, hooks=hooks, steps=steps,
                         max_steps=max_steps,
                         saving_listeners=saving_listeners)

  def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None,
               name=None):
    """Estimator.evaluate on CPU/GPU (also with use_tpu=True and
    eval_on_tpu=False); on the TPU, its checks, then the refusal."""
    if self._eval_on_tpu:
      check_train_steps(steps, None)
      on_tpu.check_evaluate_call(steps, self._batch_sizes[ModeKeys.EVAL])
      on_tpu.refuse(self._setup, input_fn, ModeKeys.EVAL,
                    self._user_model_fn)
    return super().evaluate(input_fn, steps=steps, hooks=hooks,
                            checkpoint_path=checkpoint_path, name=name)

  def predict(self, input_fn, predict_keys=None, hooks=None,
              checkpoint_path=None, yield_single_examples=True):
    """Estimator.predict on CPU/GPU; with use_tpu=True, its checks, then the
    refusal (at the first example, as the real one raised)."""
    if self._use_tpu:
      on_tpu.check_predict_call(self._batch_sizes[ModeKeys.PREDICT])
      on_tpu.refuse(self._setup, input_fn, ModeKeys.PREDICT,
                    self._user_model_fn)
    yield from super().predict(
        input_fn, predict_keys=predict_keys, hooks=hooks,
        checkpoint_path=checkpoint_path,
        yield_single_examples=yield_single_examples)
