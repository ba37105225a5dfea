"""RunConfig: legacy fields with legacy defaults, and TF_CONFIG parsing."""

import copy
import json
import os
from typing import Any, Mapping, Optional

import tensorflow as tf

from estimator_compat.engines import engine_chosen, resolve_engine_name


class TaskType:
  """Task names a TF_CONFIG cluster may hold."""
  MASTER = "master"
  PS = "ps"
  WORKER = "worker"
  CHIEF = "chief"
  EVALUATOR = "evaluator"


_USE_DEFAULT = object()
_DEFAULT_SAVE_CHECKPOINTS_SECS = 600
_CHIEF_TYPES = (TaskType.CHIEF, TaskType.MASTER)

_FIELDS = ("model_dir", "tf_random_seed", "save_summary_steps",
           "save_checkpoints_steps", "save_checkpoints_secs", "session_config",
           "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
           "log_step_count_steps", "train_distribute", "device_fn", "protocol",
           "eval_distribute", "experimental_distribute",
           "experimental_max_worker_delay_secs",
           "session_creation_timeout_secs", "checkpoint_save_graph_def",
           "engine", "steps_per_loop", "min_shard_bytes", "max_shards")


def _tf_config_from_env() -> dict:
  raw = os.environ.get("TF_CONFIG", "")
  if not raw.strip():
    return {}
  try:
    parsed = json.loads(raw)
  except json.JSONDecodeError as e:
    raise ValueError(
        f"TF_CONFIG is not valid JSON ({e.msg} at position {e.pos}): {raw!r}. "
        "Fix: set it to a JSON object such as "
        '{"cluster": {"chief": ["host:port"], "worker": ["host:port"]}, '
        '"task": {"type": "chief", "index": 0}}, or unset it for local '
        "training.") from None
  if not isinstance(parsed, dict):
    raise ValueError(
        f"TF_CONFIG must be a JSON object, got {type(parsed).__name__}: "
        f"{raw!r}. Fix: use {{\"cluster\": {{...}}, \"task\": {{...}}}}.")
  return parsed


class _ClusterInfo:
  """What TF_CONFIG says about this process; validated on construction."""

  def __init__(self, tf_config: Mapping[str, Any]):
    cluster = tf_config.get("cluster") or {}
    task = tf_config.get("task") or {}
    if not isinstance(cluster, dict) or not isinstance(task, dict):
      raise ValueError(
          "TF_CONFIG 'cluster' and 'task' must be JSON objects. Fix: "
          '{"cluster": {"chief": ["host:port"]}, "task": {"type": "chief", '
          '"index": 0}}.')
    self.cluster_spec = tf.train.ClusterSpec(cluster)
    self.task_type = task.get("type")
    self.task_id = task.get("index", 0)
    if not isinstance(self.task_id, int) or self.task_id < 0:
      raise ValueError(
          f"TF_CONFIG task index must be a non-negative integer, got "
          f"{self.task_id!r}.")
    self.service = tf_config.get("service")
    self.model_dir = tf_config.get("model_dir")
    if not cluster:
      self._init_local()
    else:
      self._init_distributed(cluster)

  def _init_local(self) -> None:
    if self.task_type not in (None, TaskType.WORKER, TaskType.EVALUATOR):
      raise ValueError(
          f"TF_CONFIG has task type {self.task_type!r} but no 'cluster'. Fix: "
          "add the cluster that task belongs to, or remove 'task'.")
    if self.task_type == TaskType.EVALUATOR:
      self.is_chief, self.num_worker_replicas = False, 0
    else:
      self.task_type, self.task_id = TaskType.WORKER, 0
      self.is_chief, self.num_worker_replicas = True, 1
    self.master = ""
    self.num_ps_replicas = 0
    self.global_id_in_cluster = 0 if self.is_chief else None

  def _init_distributed(self, cluster: Mapping[str, Any]) -> None:
    jobs = {name: list(addrs) for name, addrs in cluster.items()}
    chiefs = sum(len(jobs.get(name, [])) for name in _CHIEF_TYPES)
    if chiefs != 1:
      raise ValueError(
          f"TF_CONFIG cluster must have exactly one 'chief' task, it has "
          f"{chiefs}: {jobs}. Fix: add \"chief\": [\"host:port\"] to the "
          "cluster (one worker acts as chief, writes checkpoints and "
          "summaries).")
    if self.task_type is None:
      raise ValueError(
          "TF_CONFIG has a 'cluster' but no task type. Fix: set "
          '"task": {"type": "worker", "index": 0} for this process.')
    if self.task_type == TaskType.EVALUATOR:
      if self.task_id != 0:
        raise ValueError(
            f"TF_CONFIG evaluator task index must be 0, got {self.task_id}.")
      self.master, self.is_chief = "", False
      self.num_ps_replicas = self.num_worker_replicas = 0
      self.global_id_in_cluster = None
      return
    if self.task_type not in jobs:
      raise ValueError(
          f"TF_CONFIG task type {self.task_type!r} is not in the cluster "
          f"{sorted(jobs)}. Fix: use one of those job names, or add the job.")
    if self.task_id >= len(jobs[self.task_type]):
      raise ValueError(
          f"TF_CONFIG task index {self.task_id} is out of range: job "
          f"{self.task_type!r} has {len(jobs[self.task_type])} task(s), so "
          f"the index must be 0..{len(jobs[self.task_type]) - 1}.")
    self.master = "grpc://" + jobs[self.task_type][self.task_id]
    self.is_chief = self.task_type in _CHIEF_TYPES
    self.num_ps_replicas = len(jobs.get(TaskType.PS, []))
    self.num_worker_replicas = chiefs + len(jobs.get(TaskType.WORKER, []))
    order = [TaskType.CHIEF, TaskType.MASTER, TaskType.WORKER, TaskType.PS]
    offset = 0
    for name in order:
      if name == self.task_type:
        break
      offset += len(jobs.get(name, []))
    self.global_id_in_cluster = offset + self.task_id


class RunConfig:
  """Run configuration of an Estimator, field for field as `tf.estimator`.

  TF_CONFIG (environment variable, JSON) is read when the config is built and
  gives `cluster_spec`, `task_type`, `task_id`, `is_chief`, `master`,
  `num_ps_replicas`, `num_worker_replicas`. Malformed TF_CONFIG fails here,
  with the fix, before anything is trained.
  """

  def __init__(self,
               model_dir: Optional[str] = None,
               tf_random_seed: Optional[int] = None,
               save_summary_steps: int = 100,
               save_checkpoints_steps: Any = _USE_DEFAULT,
               save_checkpoints_secs: Any = _USE_DEFAULT,
               session_config: Optional[tf.compat.v1.ConfigProto] = None,
               keep_checkpoint_max: int = 5,
               keep_checkpoint_every_n_hours: float = 10000,
               log_step_count_steps: int = 100,
               train_distribute: Any = None,
               device_fn: Any = None,
               protocol: Optional[str] = None,
               eval_distribute: Any = None,
               experimental_distribute: Any = None,
               experimental_max_worker_delay_secs: Optional[int] = None,
               session_creation_timeout_secs: int = 7200,
               checkpoint_save_graph_def: bool = True,
               engine: Optional[str] = None,
               steps_per_loop: int = 1,
               min_shard_bytes: Optional[int] = None,
               max_shards: Optional[int] = None):
    if (save_checkpoints_steps not in (None, _USE_DEFAULT) and
        save_checkpoints_secs not in (None, _USE_DEFAULT)):
      raise ValueError(
          "RunConfig: save_checkpoints_steps and save_checkpoints_secs cannot "
          "both be set. Fix: pass only one of them.")
    if save_checkpoints_steps is _USE_DEFAULT and (
        save_checkpoints_secs is _USE_DEFAULT):
      save_checkpoints_steps = None
      save_checkpoints_secs = _DEFAULT_SAVE_CHECKPOINTS_SECS
    elif save_checkpoints_steps is _USE_DEFAULT:
      save_checkpoints_steps = None
    elif save_checkpoints_secs is _USE_DEFAULT:
      save_checkpoints_secs = None
    for name, value in (("save_summary_steps", save_summary_steps),
                        ("save_checkpoints_steps", save_checkpoints_steps),
                        ("save_checkpoints_secs", save_checkpoints_secs),
                        ("keep_checkpoint_max", keep_checkpoint_max),
                        ("log_step_count_steps", log_step_count_steps),
                        ("tf_random_seed", tf_random_seed)):
      if value is not None and (not isinstance(value, (int, float)) or
                                value < 0):
        raise ValueError(
            f"RunConfig: {name} must be a non-negative number or None, got "
            f"{value!r}.")
    if session_config is not None and not isinstance(
        session_config, tf.compat.v1.ConfigProto):
      raise TypeError(
          f"RunConfig: session_config must be a tf.compat.v1.ConfigProto, got "
          f"{type(session_config).__name__}.")
    self._cluster = _ClusterInfo(_tf_config_from_env())
    if model_dir is not None and self._cluster.model_dir is not None and (
        os.path.abspath(model_dir) != os.path.abspath(self._cluster.model_dir)):
      raise ValueError(
          f"RunConfig: model_dir {model_dir!r} differs from TF_CONFIG's "
          f"model_dir {self._cluster.model_dir!r}. Fix: set only one.")
    self._model_dir = model_dir or self._cluster.model_dir
    self._tf_random_seed = tf_random_seed
    self._save_summary_steps = save_summary_steps
    self._save_checkpoints_steps = save_checkpoints_steps
    self._save_checkpoints_secs = save_checkpoints_secs
    self._session_config = session_config
    self._keep_checkpoint_max = keep_checkpoint_max
    self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
    self._log_step_count_steps = log_step_count_steps
    self._train_distribute = train_distribute
    self._device_fn = device_fn
    self._protocol = protocol
    self._eval_distribute = eval_distribute
    self._experimental_distribute = experimental_distribute
    self._experimental_max_worker_delay_secs = (
        experimental_max_worker_delay_secs)
    self._session_creation_timeout_secs = session_creation_timeout_secs
    self._checkpoint_save_graph_def = checkpoint_save_graph_def
    # Extension: which engine runs each mode ("graph" or "function"); None
    # means $ESTIMATOR_COMPAT_ENGINE, else the default.
    self._engine = engine
    resolve_engine_name(engine)
    # Extension: training steps per function call on the function engine.
    if not isinstance(steps_per_loop, int) or steps_per_loop < 1:
      raise ValueError(
          f"RunConfig: steps_per_loop must be an integer >= 1, got "
          f"{steps_per_loop!r}.")
    self._steps_per_loop = steps_per_loop
    # Extension: variable partitioning under parameter-server training
    # (tf.distribute.experimental.partitioners.MinSizePartitioner).
    for name, value in (("min_shard_bytes", min_shard_bytes),
                        ("max_shards", max_shards)):
      if value is not None and (not isinstance(value, int) or value < 1):
        raise ValueError(
            f"RunConfig: {name} must be an integer >= 1 or None, got "
            f"{value!r}.")
    self._min_shard_bytes = min_shard_bytes
    self._max_shards = max_shards

  # Legacy field properties.
  model_dir = property(lambda self: self._model_dir)
  min_shard_bytes = property(lambda self: self._min_shard_bytes)
  max_shards = property(lambda self: self._max_shards)
  tf_random_seed = property(lambda self: self._tf_random_seed)
  save_summary_steps = property(lambda self: self._save_summary_steps)
  save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
  save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
  keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
  keep_checkpoint_every_n_hours = property(
      lambda self: self._keep_checkpoint_every_n_hours)
  log_step_count_steps = property(lambda self: self._log_step_count_steps)
  train_distribute = property(lambda self: self._train_distribute)
  eval_distribute = property(lambda self: self._eval_distribute)
  experimental_distribute = property(
      lambda self: self._experimental_distribute)
  experimental_max_worker_delay_secs = property(
      lambda self: self._experimental_max_worker_delay_secs)
  device_fn = property(lambda self: self._device_fn)
  protocol = property(lambda self: self._protocol)
  session_creation_timeout_secs = property(
      lambda self: self._session_creation_timeout_secs)
  checkpoint_save_graph_def = property(
      lambda self: self._checkpoint_save_graph_def)

  steps_per_loop = property(lambda self: self._steps_per_loop)

  @property
  def engine(self) -> str:
    """The engine that runs each mode (an extension of the legacy API)."""
    return resolve_engine_name(self._engine)

  @property
  def engine_chosen(self) -> bool:
    """True when RunConfig(engine=...) or $ESTIMATOR_COMPAT_ENGINE chose it.

    Otherwise each call picks its engine (engines/dispatch.py).
    """
    return engine_chosen(self._engine)

  # TF_CONFIG properties.
  cluster_spec = property(lambda self: self._cluster.cluster_spec)
  task_type = property(lambda self: self._cluster.task_type)
  task_id = property(lambda self: self._cluster.task_id)
  is_chief = property(lambda self: self._cluster.is_chief)
  master = property(lambda self: self._cluster.master)
  evaluation_master = property(lambda self: "")
  num_ps_replicas = property(lambda self: self._cluster.num_ps_replicas)
  num_worker_replicas = property(
      lambda self: self._cluster.num_worker_replicas)
  global_id_in_cluster = property(
      lambda self: self._cluster.global_id_in_cluster)
  service = property(lambda self: self._cluster.service)

  @property
  def session_config(self) -> tf.compat.v1.ConfigProto:
    """The session config; by default soft placement, as the Estimator."""
    if self._session_config is not None:
      return self._session_config
    return tf.compat.v1.ConfigProto(allow_soft_placement=True)

  @property
  def is_distributed(self) -> bool:
    """True when TF_CONFIG names a cluster (not part of the legacy API)."""
    return bool(self._cluster.cluster_spec.as_dict())

  def __deepcopy__(self, memo) -> "RunConfig":
    """A copy that shares strategy objects (they hold devices and threads)."""
    shared = ("_train_distribute", "_eval_distribute",
              "_experimental_distribute", "_v2_strategies", "_device_fn")
    copied = RunConfig.__new__(RunConfig)
    memo[id(self)] = copied
    for key, value in self.__dict__.items():
      copied.__dict__[key] = value if key in shared else copy.deepcopy(
          value, memo)
    return copied

  def replace(self, **kwargs: Any) -> "RunConfig":
    """Returns a copy with the given legacy fields replaced.

    Raises:
      ValueError: a name is not a RunConfig field.
    """
    unknown = sorted(set(kwargs) - set(_FIELDS))
    if unknown:
      raise ValueError(
          f"RunConfig.replace: unknown field(s) {unknown}. Valid fields: "
          f"{list(_FIELDS)}.")
    values = {name: getattr(self, "_" + name) for name in _FIELDS}
    values.update(kwargs)
    if ("save_checkpoints_steps" in kwargs and
        "save_checkpoints_secs" not in kwargs and
        kwargs["save_checkpoints_steps"] is not None):
      values["save_checkpoints_secs"] = None
    if ("save_checkpoints_secs" in kwargs and
        "save_checkpoints_steps" not in kwargs and
        kwargs["save_checkpoints_secs"] is not None):
      values["save_checkpoints_steps"] = None
    new = copy.copy(self)
    new.__init__(**values)
    return new

  def __repr__(self) -> str:
    fields = ", ".join(f"{name}={getattr(self, '_' + name)!r}"
                       for name in _FIELDS)
    return f"RunConfig({fields})"
