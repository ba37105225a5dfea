"""RunConfig: legacy fields with legacy defaults (TF_CONFIG: tf_config.py)."""

import copy
import os
from typing import Any, Optional

import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

from estimator_compat.distribute import strategies
from estimator_compat.front import configuration
from estimator_compat.front.fn_args import fn_args
from estimator_compat.distribute.tf_config import (ClusterInfo, TaskType,
                                        tf_config_from_env)


_USE_DEFAULT = object()
_DEFAULT_SAVE_CHECKPOINTS_SECS = 600

# The legacy fields replace() may change, then this library's own.
_LEGACY_FIELDS = (
    "model_dir", "tf_random_seed", "save_summary_steps",
    "save_checkpoints_steps", "save_checkpoints_secs", "session_config",
    "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
    "log_step_count_steps", "train_distribute", "device_fn", "protocol",
    "eval_distribute", "experimental_distribute",
    "experimental_max_worker_delay_secs", "session_creation_timeout_secs",
    "checkpoint_save_graph_def")
_FIELDS = _LEGACY_FIELDS + ("engine", "steps_per_loop", "min_shard_bytes",
                            "max_shards", "jit_compile", "save_on_preemption")
_CLUSTER_FIELDS = ("service", "cluster_spec", "task_type", "task_id",
                   "global_id_in_cluster", "master", "evaluation_master",
                   "is_chief", "num_ps_replicas", "num_worker_replicas")
_BOTH_SAVE_SETTINGS = (
    "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set. "
    "Fix: pass only one of them (None for the other).")
# Objects a copy of the config shares: they hold devices and threads.
_SHARED = ("_train_distribute", "_eval_distribute", "_experimental_distribute",
           "_device_fn")


def _rewrite_once() -> tf.compat.v1.GraphOptions:
  return tf.compat.v1.GraphOptions(
      rewrite_options=rewriter_config_pb2.RewriterConfig(
          meta_optimizer_iterations=rewriter_config_pb2.RewriterConfig.ONE))


def default_session_config() -> tf.compat.v1.ConfigProto:
  """The session config an Estimator uses when its RunConfig has none."""
  return tf.compat.v1.ConfigProto(allow_soft_placement=True,
                                  graph_options=_rewrite_once())


def _distributed_session_config(task_type: str, task_id: int
                                ) -> Optional[tf.compat.v1.ConfigProto]:
  """Between-graph default: each task sees the ps and its own job's devices."""
  filters = {
      TaskType.MASTER: ["/job:ps", "/job:master"],
      TaskType.CHIEF: ["/job:ps", "/job:chief"],
      TaskType.WORKER: ["/job:ps", f"/job:worker/task:{task_id}"],
      TaskType.PS: ["/job:ps", "/job:worker", "/job:chief", "/job:master"],
  }.get(task_type)
  if filters is None:
    return None
  return tf.compat.v1.ConfigProto(allow_soft_placement=True,
                                  graph_options=_rewrite_once(),
                                  device_filters=filters)


def _is_int(value: Any) -> bool:
  return isinstance(value, int) and not isinstance(value, bool)


# (field, check, the Estimator's message, fix); None values are not checked.
_CHECKS = (
    ("model_dir", bool, "model_dir should be non-empty",
     "pass a directory path, or None for a temporary one"),
    ("save_summary_steps", lambda v: v >= 0,
     "save_summary_steps should be >= 0", "use 0 or None to turn it off"),
    ("save_checkpoints_steps", lambda v: v >= 0,
     "save_checkpoints_steps should be >= 0", "use None to turn it off"),
    ("save_checkpoints_secs", lambda v: v >= 0,
     "save_checkpoints_secs should be >= 0", "use None to turn it off"),
    ("session_config",
     lambda v: isinstance(v, tf.compat.v1.ConfigProto),
     "session_config must be instance of ConfigProto",
     "pass a tf.compat.v1.ConfigProto or None"),
    ("keep_checkpoint_max", lambda v: v >= 0,
     "keep_checkpoint_max should be >= 0",
     "use 0 or None to keep every checkpoint"),
    ("keep_checkpoint_every_n_hours", lambda v: v > 0,
     "keep_checkpoint_every_n_hours should be > 0",
     "use a positive number of hours (the default 10000 turns it off)"),
    ("log_step_count_steps", lambda v: v > 0,
     "log_step_count_steps should be > 0", "use None to turn logging off"),
    ("tf_random_seed", _is_int, "tf_random_seed must be integer.",
     "pass an int or None"),
    ("experimental_max_worker_delay_secs", _is_int,
     "experimental_max_worker_delay_secs must be an integer if set.",
     "pass an int or None"),
    ("session_creation_timeout_secs", lambda v: v > 0,
     "session_creation_timeout_secs should be > 0",
     "use a positive number of seconds"),
    ("device_fn",
     lambda v: callable(v) and set(fn_args(v)) == {"op"},
     'device_fn must be callable with exactly one argument "op".',
     "def device_fn(op): return device_string"),
    ("protocol", lambda v: v in ("grpc", "grpc+verbs"),
     "protocol should be grpc or grpc+verbs", "pass one of them or None"),
)


def _adopt_experimental_distribute(config: "RunConfig") -> None:
  """experimental_distribute's strategies as train/eval_distribute.

  As the Estimator did: DistributeConfig(train_distribute=...,
  eval_distribute=...) sets the RunConfig's fields of those names.

  Raises:
    ValueError: a strategy is set both ways (the Estimator's wording first).
  """
  # pylint: disable=protected-access
  distribute = config._experimental_distribute
  for name in ("train_distribute", "eval_distribute"):
    strategy = getattr(distribute, name, None)
    if not strategy:
      continue
    if getattr(config, "_" + name):
      raise ValueError(
          f"Either `{name}` or`experimental_distribute.{name}` can be set. "
          f"Fix: pass the strategy once, as RunConfig({name}=...).")
    setattr(config, "_" + name, strategy)


def _cluster_info(tf_config: Any, train_distribute: Any) -> ClusterInfo:
  """TF_CONFIG's cluster and task as the Estimator's RunConfig read them.

  With train_distribute set (not a TPUStrategy), a cluster without a master
  job and no task, the Estimator's RunConfig kept the cluster with the local
  values (worker 0, chief) and refused train() later; so does this
  (`task_missing`) instead of refusing the RunConfig. With a task, its
  distribute coordinator ran a cluster without a chief job, worker 0 as the
  chief (MultiWorkerMirroredStrategy's usual TF_CONFIG); so does this.
  """
  cluster = tf_config.get("cluster")
  task = tf_config.get("task") or {}
  coordinated = not (
      train_distribute is None or
      type(train_distribute).__name__.startswith("TPUStrategy") or
      not isinstance(cluster, dict) or not cluster or
      TaskType.MASTER in cluster)
  if not coordinated or not isinstance(task, dict) or task.get("type"):
    return ClusterInfo(tf_config, first_worker_chief=coordinated)
  info = ClusterInfo({k: v for k, v in tf_config.items()
                      if k not in ("cluster", "task")})
  info.cluster_spec = tf.train.ClusterSpec(cluster)
  info.task_missing = True
  return info


def _validate(config: "RunConfig") -> None:
  """The Estimator's checks of the legacy fields, then ours."""
  for name, check, message, fix in _CHECKS:
    value = getattr(config, "_" + name)
    if value is not None and not check(value):
      raise ValueError(f"{message} Fix: {fix} (got {value!r}).")
  for name in ("train_distribute", "eval_distribute"):
    strategies.check_runconfig_strategy(getattr(config, "_" + name))
  configuration.engine_name(config._engine)  # pylint: disable=protected-access
  steps_per_loop = config._steps_per_loop  # pylint: disable=protected-access
  if steps_per_loop is not None and (
      not _is_int(steps_per_loop) or steps_per_loop < 1):
    raise ValueError(
        f"RunConfig: steps_per_loop must be an integer >= 1 or None "
        f"(automatic), got {steps_per_loop!r}.")
  if not isinstance(config._jit_compile, bool):  # pylint: disable=protected-access
    raise ValueError(
        f"RunConfig: jit_compile must be True or False, got "
        f"{config._jit_compile!r}.")  # pylint: disable=protected-access
  if not isinstance(config._save_on_preemption, bool):  # pylint: disable=protected-access
    raise ValueError(
        f"RunConfig: save_on_preemption must be True or False, got "
        f"{config._save_on_preemption!r}.")  # pylint: disable=protected-access
  for name in ("min_shard_bytes", "max_shards"):
    value = getattr(config, "_" + name)
    if value is not None and (not _is_int(value) or value < 1):
      raise ValueError(
          f"RunConfig: {name} must be an integer >= 1 or None, got "
          f"{value!r}.")


def _model_dir(model_dir: Any, tf_config: dict) -> Optional[str]:
  """model_dir from the argument or TF_CONFIG, which must agree."""
  if model_dir is not None:
    model_dir = os.fspath(model_dir)
  if model_dir == "":
    raise ValueError("model_dir should be non-empty. Fix: pass a directory "
                     "path, or None for a temporary one.")
  from_env = tf_config.get("model_dir")
  if from_env == "":
    raise ValueError("model_dir in TF_CONFIG should be non-empty. Fix: set "
                     "it to the shared model directory or remove it.")
  if from_env and model_dir and os.path.abspath(model_dir) != os.path.abspath(
      from_env):
    raise ValueError(
        "`model_dir` provided in RunConfig construct, if set, must have the "
        "same value as the model_dir in TF_CONFIG. model_dir: "
        f"{model_dir}\nTF_CONFIG[\"model_dir\"]: {from_env}.\nFix: set only "
        "one of them.")
  return model_dir or from_env


class RunConfig:
  """Run configuration of an Estimator, field for field as `tf.estimator`.

  TF_CONFIG (environment variable, JSON) is read when the config is built and
  gives `cluster_spec`, `task_type`, `task_id`, `is_chief`, `master`,
  `evaluation_master`, `num_ps_replicas`, `num_worker_replicas`,
  `global_id_in_cluster` and `service`, by the Estimator's rules. A malformed
  TF_CONFIG fails here, with the Estimator's message and the fix, before
  anything is trained. `session_config` is None unless given, or the
  Estimator's between-graph default for a cluster task trained without a
  strategy; the Estimator fills in its default (`default_session_config`).

  Under a strategy, the cluster properties describe this task as TF_CONFIG
  names it (the Estimator's distribute coordinator showed local values here
  and set the task's own in the config passed to model_fn).
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
               steps_per_loop: Optional[int] = None,
               min_shard_bytes: Optional[int] = None,
               max_shards: Optional[int] = None,
               jit_compile: bool = False,
               save_on_preemption: bool = True):
    """Builds a RunConfig; see the class docstring.

    Args (beyond the Estimator's):
      engine: "graph" or "function" for every mode; None means
        $ESTIMATOR_COMPAT_ENGINE, else the default.
      steps_per_loop: training steps per function call (function engine).
        None (the default): as many as run before the next step at which a
        hook, summary, log line or checkpoint must observe one, with results
        identical to 1 (one step per call); N: N steps per call, hooks and
        cadences checked once per call.
      min_shard_bytes: variable partitioning under parameter-server training
        (tf.distribute.experimental.partitioners.MinSizePartitioner).
      max_shards: the same partitioner's maximum number of shards.
      jit_compile: compile the model's step functions with XLA (function
        engine; the operations XLA supports, as tf.xla.experimental.jit_scope
        marks them). Off by default.
      save_on_preemption: on SIGTERM or SIGINT during train(), finish the
        step in progress, save a checkpoint at the step reached, release the
        model_dir lock, then let the signal act (exit code 143 for SIGTERM,
        KeyboardInterrupt for SIGINT, or the program's own handler); see
        docs/failure_semantics.md. On by default; False: the signal acts at
        once, as with the Estimator.

    Raises:
      ValueError: a field or TF_CONFIG is invalid, or both save settings set.
      TypeError: TF_CONFIG's `service` is not an object.
    """
    if save_checkpoints_steps is _USE_DEFAULT and (
        save_checkpoints_secs is _USE_DEFAULT):
      save_checkpoints_steps = None
      save_checkpoints_secs = _DEFAULT_SAVE_CHECKPOINTS_SECS
    elif save_checkpoints_secs is _USE_DEFAULT:
      save_checkpoints_secs = None
    elif save_checkpoints_steps is _USE_DEFAULT:
      save_checkpoints_steps = None
    elif (save_checkpoints_steps is not None and
          save_checkpoints_secs is not None):
      raise ValueError(_BOTH_SAVE_SETTINGS)
    tf_config = tf_config_from_env()
    self._model_dir = _model_dir(model_dir, tf_config)
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
    self._engine = engine
    self._steps_per_loop = steps_per_loop
    self._min_shard_bytes = min_shard_bytes
    self._max_shards = max_shards
    self._jit_compile = jit_compile
    self._save_on_preemption = save_on_preemption
    _adopt_experimental_distribute(self)
    _validate(self)
    cluster = _cluster_info(tf_config, self._train_distribute)
    self._task_missing = getattr(cluster, "task_missing", False)
    for name in _CLUSTER_FIELDS:
      setattr(self, "_" + name, getattr(cluster, name))
    self._has_cluster = cluster.has_cluster
    with_strategy = (train_distribute or eval_distribute or
                     experimental_distribute)
    if session_config is None and cluster.has_cluster and not with_strategy:
      self._session_config = _distributed_session_config(self._task_type,
                                                         self._task_id)

  # Legacy field properties.
  model_dir = property(lambda self: self._model_dir)
  tf_random_seed = property(lambda self: self._tf_random_seed)
  save_summary_steps = property(lambda self: self._save_summary_steps)
  save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
  save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
  session_config = property(lambda self: self._session_config)
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

  # TF_CONFIG properties.
  cluster_spec = property(lambda self: self._cluster_spec)
  task_type = property(lambda self: self._task_type)
  task_id = property(lambda self: self._task_id)
  is_chief = property(lambda self: self._is_chief)
  master = property(lambda self: self._master)
  evaluation_master = property(lambda self: self._evaluation_master)
  num_ps_replicas = property(lambda self: self._num_ps_replicas)
  num_worker_replicas = property(lambda self: self._num_worker_replicas)
  global_id_in_cluster = property(lambda self: self._global_id_in_cluster)
  service = property(lambda self: self._service)

  # Extensions of the legacy API.
  steps_per_loop = property(lambda self: self._steps_per_loop)
  min_shard_bytes = property(lambda self: self._min_shard_bytes)
  max_shards = property(lambda self: self._max_shards)
  jit_compile = property(lambda self: self._jit_compile)
  save_on_preemption = property(lambda self: self._save_on_preemption)

  @property
  def steps_per_loop_required(self) -> bool:
    """True when steps_per_loop > 1 must be honoured (the graph engine,
    which runs one step per session call, then refuses the call). A
    subclass may make it a hint the graph engine ignores (tpu.RunConfig's
    iterations_per_loop)."""
    return self._steps_per_loop not in (None, 1)

  @property
  def engine(self) -> str:
    """The engine that runs each mode (an extension of the legacy API)."""
    return configuration.engine_name(self._engine)

  @property
  def engine_chosen(self) -> bool:
    """True when RunConfig(engine=...) or $ESTIMATOR_COMPAT_ENGINE chose it.

    Otherwise each call picks its engine (engines/dispatch.py).
    """
    return configuration.engine_chosen(self._engine)

  @property
  def is_distributed(self) -> bool:
    """True when TF_CONFIG names a cluster, also on its evaluator."""
    return self._has_cluster

  def __deepcopy__(self, memo) -> "RunConfig":
    """A copy of the same class that shares strategy objects."""
    copied = type(self).__new__(type(self))
    memo[id(self)] = copied
    for key, value in self.__dict__.items():
      copied.__dict__[key] = value if key in _SHARED else copy.deepcopy(
          value, memo)
    return copied

  def replace(self, **kwargs: Any) -> "RunConfig":
    """A copy (of the same class) with the given fields replaced.

    TF_CONFIG is not read again. Setting one of save_checkpoints_steps /
    save_checkpoints_secs to a value turns the other off.

    Raises:
      ValueError: a name is not a replaceable field, a value is invalid, or
        both save settings are set.
    """
    new = copy.deepcopy(self)
    for key, value in kwargs.items():
      if key not in _FIELDS:
        raise ValueError(
            f"Replacing {key} is not supported. Allowed properties are "
            f"{list(_FIELDS)}. Fix: build a new RunConfig for other "
            "properties (cluster ones come from TF_CONFIG).")
      setattr(new, "_" + key, value)
    steps_set = "save_checkpoints_steps" in kwargs
    secs_set = "save_checkpoints_secs" in kwargs
    # pylint: disable=protected-access
    if steps_set and secs_set:
      if (new._save_checkpoints_steps is not None and
          new._save_checkpoints_secs is not None):
        raise ValueError(_BOTH_SAVE_SETTINGS)
    elif steps_set and kwargs["save_checkpoints_steps"] is not None:
      new._save_checkpoints_secs = None
    elif secs_set and kwargs["save_checkpoints_secs"] is not None:
      new._save_checkpoints_steps = None
    # pylint: enable=protected-access
    _validate(new)
    return new

  def __repr__(self) -> str:
    fields = ", ".join(f"{name}={getattr(self, '_' + name)!r}"
                       for name in _FIELDS)
    return f"{type(self).__name__}({fields})"
