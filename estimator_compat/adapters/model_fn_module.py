"""ModelFnModule: a legacy model_fn as a tf.Module for TF2 training loops.

  module = ModelFnModule(model_fn, params={...})
  module.load_legacy_checkpoint(estimator_model_dir)   # optional
  loss = module.train_step(features, labels)           # its own train_op
  outputs = module(features, mode=ModeKeys.PREDICT)    # {"predictions": ...}
  module.save_legacy_checkpoint(model_dir)             # the Estimator resumes

The model_fn is traced once per mode and input signature (a TF1 graph in a
function, see traced_call.py); its variables are created once, eagerly,
under their legacy names, and tracked by the module, so that
`tf.train.Checkpoint(model=module)` and `module.trainable_variables` work.
"""

import os
from typing import Any, Dict, Optional

import tensorflow as tf

from estimator_compat.distribute import strategies
from estimator_compat.front import configuration
from estimator_compat.adapters.traced_call import (TracedCall, as_input_values,
                                                   signature_for)
from estimator_compat.adapters.variable_store import LegacyVariableStore
from estimator_compat.engines.function import variable_saver
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import ModelSetup, check_model_fn
from estimator_compat.adapters.local_config import default_config
from estimator_compat.run_config import RunConfig

_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


def _strategy_in_use() -> Optional[tf.distribute.Strategy]:
  return tf.distribute.get_strategy() if tf.distribute.has_strategy() else None


def _local_replica() -> Optional[int]:
  """This replica's index on this worker, when the worker runs several."""
  strategy = _strategy_in_use()
  if strategy is None or strategies.is_parameter_server(strategy):
    return None
  devices = len(strategy.extended.worker_devices)
  context = tf.distribute.get_replica_context()
  if devices <= 1 or context is None:
    return None
  replica = context.replica_id_in_sync_group
  if not isinstance(replica, int):
    replica = int(tf.get_static_value(replica))
  return replica % devices


class ModelFnModule(tf.Module):
  """A legacy model_fn whose variables, train_op and outputs TF2 code uses.

  Args:
    model_fn: the legacy `model_fn(features, labels, mode, params, config)`.
    params: the Estimator's params.
    config: a RunConfig (its tf_random_seed seeds the variables' initial
      values; model_dir is not used).
    name: the module's name.

  Variables are created by the first call (or `build`). Under a
  tf.distribute strategy, build the module inside `strategy.scope()` so that
  its variables are the strategy's.
  """

  def __init__(self, model_fn, params: Optional[Dict[str, Any]] = None,
               config: Optional[RunConfig] = None,
               name: Optional[str] = None):
    super().__init__(name=name)
    check_model_fn(model_fn, params)
    config = config if config is not None else default_config()
    self._setup = ModelSetup(model_fn=model_fn,
                             model_dir=config.model_dir or "",
                             config=config, params=dict(params or {}),
                             choices=configuration.resolve(config))
    self._store = LegacyVariableStore()
    self._calls = _Calls()
    self._restored_from: Optional[str] = None
    # Tracked, so that tf.train.Checkpoint(model=module) saves them; filled
    # as traces create variables.
    self.legacy_variables = {}

  # Variables and legacy checkpoints.

  def variables_by_legacy_name(self) -> Dict[str, tf.Variable]:
    """Every variable by its legacy name (as the Estimator's checkpoints).

    Includes optimizer slots and `global_step` once TRAIN was traced, and
    v1 metric variables once EVAL was.
    """
    return self._store.by_name()

  @property
  def global_step(self) -> tf.Variable:
    """The legacy `global_step` (exists after the first call or build)."""
    return self._require_variables()["global_step"]

  def build(self, features: Any, labels: Any = None,
            mode: str = ModeKeys.TRAIN) -> None:
    """Creates the variables of `mode` (TRAIN: slots and global_step too).

    Runs nothing. `features`/`labels` may be a batch or TensorSpecs.
    """
    self._check_context(training=False)
    if not isinstance(tf.nest.flatten(features)[0], tf.TypeSpec):
      features, labels = as_input_values((features, labels))
    self._trace(mode, features, labels)

  def load_legacy_checkpoint(self, path: str) -> str:
    """Restores a checkpoint the Estimator wrote (a prefix or model_dir).

    Variables that later traces create (e.g. TRAIN's optimizer slots after
    a PREDICT call) are restored from the same checkpoint when they appear.

    Returns:
      The checkpoint prefix restored.

    Raises:
      ValueError: no variables yet, no checkpoint there, or a variable of the
        module missing from the checkpoint or of another shape.
    """
    variables = self._require_variables(saveable=True)
    if tf.io.gfile.isdir(path):
      found = tf.train.latest_checkpoint(path)
      if found is None:
        raise ValueError(f"No checkpoint in {path}. Fix: pass a model_dir "
                         "with a `checkpoint` file or a checkpoint prefix.")
      path = found
    variable_saver.restore_or_warm_start(self._setup, variables, path)
    self._restored_from = path
    return path

  def save_legacy_checkpoint(self, path: str) -> str:
    """Writes the variables in the Estimator's name-based format.

    Args:
      path: a directory (then `model.ckpt-<global_step>` there, with the
        `checkpoint` state file, so an Estimator on that model_dir resumes)
        or a checkpoint prefix.

    Returns:
      The checkpoint prefix written.
    """
    variables = self._require_variables(saveable=True)
    saver = variable_saver.make_saver(self._setup, variables)
    if tf.io.gfile.isdir(path) or path.endswith(os.sep):
      tf.io.gfile.makedirs(path)
      step = int(variables["global_step"].numpy())
      return saver.save(None, os.path.join(path, "model.ckpt"),
                        global_step=step, write_meta_graph=False)
    return saver.save(None, path, write_meta_graph=False)

  # Running the model_fn.

  def __call__(self, features: Any, labels: Any = None,
               mode: str = ModeKeys.PREDICT) -> Dict[str, Any]:
    """The model_fn's outputs for one batch.

    Returns:
      A dict with what the spec has of: `loss`, `predictions`, and in EVAL
      `metrics` (eval_metric_ops and the mean loss after this batch's update,
      as Estimator.evaluate reports them; `reset_metrics()` starts over).
      TRAIN mode computes the loss without running the train_op.
    """
    if mode not in _MODES:
      raise ValueError(f"mode={mode!r} is not one of {_MODES}. Fix: pass a "
                       "ModeKeys value.")
    self._check_context(training=False)
    features, labels = as_input_values((features, labels))
    call = self._trace(mode, features, labels)
    keys = ["loss", "predictions"] + (["metric_update"]
                                      if mode == ModeKeys.EVAL else [])
    out = dict(call.run(keys, features, labels))
    out.pop("metric_update", None)
    if mode == ModeKeys.EVAL:
      out["metrics"] = call.metric_values()
    return out

  def train_step(self, features: Any, labels: Any = None) -> tf.Tensor:
    """Runs the model_fn's own train_op on one batch; returns its loss.

    The train_op is the model_fn's: its v1 optimizer, its UPDATE_OPS
    dependencies, regularization losses. global_step advances (by the
    train_op, or here when the train_op does not, with one warning).

    Raises:
      ValueError: under a strategy whose replicas would each apply their
        own gradients without averaging them (use loss_fn there).
    """
    self._check_context(training=True)
    features, labels = as_input_values((features, labels))
    call = self._trace(ModeKeys.TRAIN, features, labels)
    if not call.has("train_op"):
      raise ValueError("model_fn returned no train_op in TRAIN mode. Fix: "
                       "return EstimatorSpec(mode, loss=..., train_op=...).")
    loss = call.run(["loss", "train_op"], features, labels)["loss"]
    if not call.increments_global_step:
      with tf.control_dependencies([loss]):
        self.global_step.assign_add(1)
    return loss

  def loss_fn(self, features: Any, labels: Any = None) -> tf.Tensor:
    """The TRAIN-mode loss, for your own optimizer and GradientTape.

    Also runs the UPDATE_OPS (e.g. batch-norm moving averages), as the
    legacy train_op did. Differentiate it with respect to
    `module.trainable_variables`.
    """
    self._check_context(training=False)
    features, labels = as_input_values((features, labels))
    call = self._trace(ModeKeys.TRAIN, features, labels)
    if not call.has("loss"):
      raise ValueError("model_fn returned no loss in TRAIN mode.")
    return call.run(["loss", "update_ops"], features, labels)["loss"]

  def reset_metrics(self) -> None:
    """Zeroes the v1 metric variables (the EVAL outputs start over)."""
    for variable in self._store.local_variables():
      variable.assign(tf.zeros_like(variable))

  # Internals.

  def _trace(self, mode: str, features: Any, labels: Any) -> TracedCall:
    signature = signature_for(features, labels)
    replica = _local_replica()
    key = (mode, repr(signature), replica)
    call = self._calls.get(key)
    if call is None:
      if replica is not None and not self._store.by_name():
        raise ValueError(
            "ModelFnModule creates its variables in cross-replica context. "
            "Fix: call module.build(features, labels) inside "
            "strategy.scope() before strategy.run.")
      before = set(self._store.by_name())
      with tf.init_scope():
        call = TracedCall(self._setup, self._store, mode, signature, replica)
      self._calls.put(key, call)
      created = {n: v for n, v in self._store.by_name().items()
                 if n not in before}
      for name, variable in created.items():
        self.legacy_variables[name] = variable
      self._restore_new(created)
    return call

  def _restore_new(self, created: Dict[str, tf.Variable]) -> None:
    """Restores variables created after load_legacy_checkpoint from it."""
    if not self._restored_from or not created:
      return
    reader = tf.train.load_checkpoint(self._restored_from)
    for name, variable in created.items():
      if reader.has_tensor(name):
        variable.assign(reader.get_tensor(name))

  def _require_variables(self, saveable: bool = False
                         ) -> Dict[str, tf.Variable]:
    variables = (self._store.saveable_by_name() if saveable
                 else self._store.by_name())
    if not variables:
      raise ValueError(
          "The module has no variables yet. Fix: call module.build(features, "
          "labels) (or the module on a batch) first.")
    return variables

  @staticmethod
  def _check_context(training: bool) -> None:
    """Refuses the strategies under which a call would not be faithful."""
    strategy = _strategy_in_use()
    if strategy is None or strategies.is_parameter_server(strategy):
      return
    if training and strategy.num_replicas_in_sync > 1:
      raise ValueError(
          "module.train_step runs the model_fn's v1 optimizer on this "
          "replica's gradients alone, so under "
          f"{type(strategy).__name__} with {strategy.num_replicas_in_sync} "
          "replicas the workers would drift apart. Fix: use module.loss_fn "
          "with a tf.keras optimizer (its apply_gradients averages across "
          "replicas), or model_fn_to_keras(...).fit.")


class _Calls:
  """The traced calls by (mode, signature); not tracked by tf.Module."""

  def __init__(self):
    self._calls: Dict[Any, TracedCall] = {}

  def get(self, key) -> Optional[TracedCall]:
    return self._calls.get(key)

  def put(self, key, call: TracedCall) -> None:
    self._calls[key] = call
