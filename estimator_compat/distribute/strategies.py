"""Which tf.distribute strategy a train or evaluate call runs under.

In this order, as the Estimator decided (plus the binary's flag):
1. `RunConfig(train_distribute=..., eval_distribute=...)` as legacy code
   passes it; TF1 strategy objects are mapped to their TF2 counterparts (one
   log line says so);
2. the strategy flags' choice (`--strategy` of the binary, or of a legacy
   program's command line read by `install()`): a frozen `StrategyChoice`
   that each call resolves in the front (front/configuration.py) and passes
   in, with the engine, as `Choices`;
3. TF_CONFIG: a cluster with `ps` tasks and no strategy means
   parameter-server training (legacy between-graph programs).
The default strategy means "no strategy". A strategy built from a name is
new per call, except the parameter-server and multi-worker ones, built once
per process (TensorFlow keeps their cluster connection and collective
context per process; the ClusterCoordinator lives as long as its strategy);
a TF1 strategy object of RunConfig is converted once per object.
"""

import weakref
from typing import Any, Dict, List, Optional

import tensorflow as tf

from estimator_compat.front import tf_logging as logging
from estimator_compat.front.configuration import (STRATEGY_NAMES, Choices,
                                                  StrategyChoice)

__all__ = ["NAMES", "StrategyChoice"]  # StrategyChoice: its old home.

NAMES = STRATEGY_NAMES
PS_WORKER_INTER_OP_THREADS = 8  # Fewer hang after the first step (notes).

# The kind of training each strategy class means (TF2 and tf.compat.v1
# forms), in the order they are checked.
_MODES = (
    ("parameter_server",
     (tf.distribute.experimental.ParameterServerStrategy,
      tf.compat.v1.distribute.experimental.ParameterServerStrategy)),
    ("multi_worker_mirrored",
     (tf.distribute.MultiWorkerMirroredStrategy,
      tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy)),
    ("mirrored", (tf.distribute.MirroredStrategy,
                  tf.compat.v1.distribute.MirroredStrategy)),
    ("one_device", (tf.distribute.OneDeviceStrategy,
                    tf.compat.v1.distribute.OneDeviceStrategy)),
)

_built: Dict[str, Any] = {}

def is_parameter_server(strategy: Any) -> bool:
  return isinstance(strategy,
                    tf.distribute.experimental.ParameterServerStrategy)


def is_multi_worker(strategy: Any) -> bool:
  return isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)


def training_mode(config: Any, choice: StrategyChoice) -> str:
  """The kind of training this config asks for, without building anything.

  One of NAMES. Non-chief tasks use it to decide whether they serve
  (parameter server) or train (multi-worker).

  Args:
    config: a RunConfig.
    choice: the strategy flags' choice (Choices.strategy).
  """
  strategy = config.train_distribute
  if strategy is not None:
    for mode, classes in _MODES:
      if isinstance(strategy, classes):
        return mode
    return "default"
  if choice.name is not None:
    return choice.name
  cluster = config.cluster_spec.as_dict() if config.cluster_spec else {}
  if cluster.get("ps"):
    return "parameter_server"
  return "default"


def _partitioner(config: Any, choice: StrategyChoice):
  min_bytes = config.min_shard_bytes or choice.min_shard_bytes
  max_shards = config.max_shards or choice.max_shards
  if min_bytes is None and max_shards is None:
    return None
  return tf.distribute.experimental.partitioners.MinSizePartitioner(
      min_shard_bytes=min_bytes or 256 << 10, max_shards=max_shards or 1)


def _parameter_server(config: Any,
                      choice: StrategyChoice) -> tf.distribute.Strategy:
  """The PS strategy of this cluster (TF_CONFIG), built once per process."""
  if "parameter_server" not in _built:
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    cluster = resolver.cluster_spec().as_dict()
    if not cluster.get("ps") or not cluster.get("worker"):
      raise ValueError(
          "Parameter-server training needs a TF_CONFIG cluster with 'ps' and "
          f"'worker' tasks (and this process as 'chief'), got {cluster}. Fix: "
          "set TF_CONFIG, or try it on one machine with "
          "--local_cluster=worker:2,ps:1.")
    _built["parameter_server"] = (
        tf.distribute.experimental.ParameterServerStrategy(
            resolver, variable_partitioner=_partitioner(config, choice)))
  return _built["parameter_server"]


def _build(name: str, config: Any,
           choice: StrategyChoice) -> Optional[tf.distribute.Strategy]:
  """The strategy `name` means: a new one per call, except where TensorFlow
  keeps per-process state (the parameter-server cluster connection, the
  multi-worker collective context), which is built once per process."""
  if name == "default":
    return None
  if name == "parameter_server":
    return _parameter_server(config, choice)
  if name == "one_device":
    gpus = tf.config.list_logical_devices("GPU")
    return tf.distribute.OneDeviceStrategy("/gpu:0" if gpus else "/cpu:0")
  if name == "mirrored":
    # All GPUs; without GPUs, every logical CPU (one unless configured).
    devices = None if tf.config.list_logical_devices("GPU") else [
        d.name for d in tf.config.list_logical_devices("CPU")]
    return tf.distribute.MirroredStrategy(devices)
  if name not in _built:
    _built[name] = tf.distribute.MultiWorkerMirroredStrategy()
  return _built[name]


def coordinator(strategy: tf.distribute.Strategy):
  """The ClusterCoordinator of a PS strategy (one per strategy)."""
  key = ("coordinator", id(strategy))
  if key not in _built:
    _built[key] = tf.distribute.experimental.coordinator.ClusterCoordinator(
        strategy)
  return _built[key]


def _cluster(config: Any) -> Dict[str, Any]:
  spec = getattr(config, "cluster_spec", None)
  return spec.as_dict() if spec else {}


def _from_v1(strategy: Any, field: str, config: Any, choice: StrategyChoice):
  # Exactly these classes: a subclass may change what the conversion drops.
  v1 = tf.compat.v1.distribute
  kind, name = type(strategy), type(strategy).__name__
  if kind is v1.MirroredStrategy:
    converted = tf.distribute.MirroredStrategy(
        devices=list(strategy.extended.worker_devices))
  elif kind is v1.OneDeviceStrategy:
    converted = tf.distribute.OneDeviceStrategy(
        strategy.extended.worker_devices[0])
  elif kind is v1.experimental.ParameterServerStrategy:
    if _cluster(config).get("ps"):
      converted = _parameter_server(config, choice)
    else:
      # Without a cluster the Estimator ran it on this machine's devices
      # (variables on the CPU, a replica per compute device): the same
      # training as mirroring over those devices.
      converted = tf.distribute.MirroredStrategy(
          devices=list(strategy.extended.worker_devices))
  elif kind is v1.experimental.MultiWorkerMirroredStrategy:
    converted = _build("multi_worker_mirrored", config, choice)
  else:
    return None
  logging.info("RunConfig.%s: running the TF1 %s as its TF2 counterpart %s.",
               field, name, type(converted).__name__)
  return converted


_V1_CLASSES = (tf.compat.v1.distribute.MirroredStrategy,
               tf.compat.v1.distribute.OneDeviceStrategy,
               tf.compat.v1.distribute.experimental.ParameterServerStrategy,
               tf.compat.v1.distribute.experimental.
               MultiWorkerMirroredStrategy)
_V2_CLASSES = (tf.distribute.MirroredStrategy, tf.distribute.OneDeviceStrategy,
               tf.distribute.MultiWorkerMirroredStrategy)
# The Estimator's refusal of a TF2 parameter-server strategy, then our fix.
TF2_PARAMETER_SERVER_REFUSED = (
    "Please use `tf.compat.v1.distribute.experimental.ParameterServerStrategy`"
    " for parameter server strategy with estimator. Fix: pass "
    "tf.compat.v1.distribute.experimental.ParameterServerStrategy(), or set "
    "no strategy and run every task with a TF_CONFIG cluster that has ps "
    "tasks (or --strategy=parameter_server; see docs/strategies.md).")


def check_runconfig_strategy(strategy: Any) -> None:
  """RunConfig's check of train_distribute / eval_distribute, as the
  Estimator's: a TF2 ParameterServerStrategy is refused.

  Raises:
    ValueError: a TF2 ParameterServerStrategy (the Estimator's message).
  """
  if type(strategy) is tf.distribute.experimental.ParameterServerStrategy:
    raise ValueError(TF2_PARAMETER_SERVER_REFUSED)


def is_set(strategy: Any, field: str) -> bool:
  """Whether a RunConfig field sets a strategy, without building anything.

  None and the default strategy set none.

  Raises:
    ValueError: a strategy this library cannot run, with the fix.
  """
  if strategy is None:
    return False
  if type(strategy) in _V1_CLASSES:
    return True
  if isinstance(strategy, tf.distribute.Strategy):
    if type(strategy).__name__ == "_DefaultDistributionStrategy":
      return False
    if isinstance(strategy, _V2_CLASSES):
      return True
  check_runconfig_strategy(strategy)
  raise ValueError(
      f"RunConfig.{field}={type(strategy).__name__} is not supported. "
      "Fix: pass a MirroredStrategy, MultiWorkerMirroredStrategy or "
      "OneDeviceStrategy (TF2 or tf.compat.v1 forms), "
      "tf.compat.v1.distribute.experimental.ParameterServerStrategy, or None "
      "to train on one device.")


def to_v2(strategy: Any, field: str, config: Any = None,
          choice: Optional[StrategyChoice] = None
          ) -> Optional[tf.distribute.Strategy]:
  """The V2 strategy to run under, or None for plain single-device runs.

  Args:
    strategy: RunConfig's `field` (train_distribute or eval_distribute).
    field: its name, for messages.
    config: the RunConfig (a TF1 ParameterServerStrategy reads its cluster).
    choice: the strategy flags' choice (PS partitioning, when RunConfig sets
      none); None: no flags.

  Raises:
    ValueError: a strategy this engine cannot run, with the fix.
  """
  if not is_set(strategy, field):
    return None
  converted = _from_v1(strategy, field, config, choice or StrategyChoice())
  return strategy if converted is None else converted


def for_training(config: Any, choice: StrategyChoice
                ) -> Optional[tf.distribute.Strategy]:
  """The strategy `train()` runs under (`choice`: Choices.strategy)."""
  if config.train_distribute is not None:
    return _converted(config, "train_distribute", choice)
  return _build(training_mode(config, choice), config, choice)


def for_evaluation(config: Any, choice: StrategyChoice
                  ) -> Optional[tf.distribute.Strategy]:
  """The strategy `evaluate()` runs under (RunConfig.eval_distribute).

  As in the Estimator, evaluation is distributed only when eval_distribute
  is set; train_distribute alone does not distribute evaluation.
  """
  return _converted(config, "eval_distribute", choice)


# A RunConfig strategy object -> what runs in its place, for as long as the
# object lives: a converted V1 strategy is built once, so its variables and
# devices stay the same across train() and evaluate() calls and across the
# copies of a RunConfig.
_runs_as: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _converted(config: Any, field: str, choice: StrategyChoice
              ) -> Optional[tf.distribute.Strategy]:
  strategy = getattr(config, field)
  if strategy is None:
    return None
  if strategy not in _runs_as:
    _runs_as[strategy] = to_v2(strategy, field, config, choice)
    _own_collective_keys(_runs_as[strategy])
  return _runs_as[strategy]


_INSTANCE_KEYS_PER_STRATEGY = 1_000_000
_strategies_seen = [0]


def _own_collective_keys(strategy: Optional[tf.distribute.Strategy]) -> None:
  """Gives a strategy collective instance keys no other strategy here uses.

  Every MirroredStrategy numbers its collective group from 1 and its
  instances from 100, so a second one in the same process (eval_distribute
  as a separate object, or one Estimator after another) issues the same
  (group, instance) keys as the first, and TensorFlow's collective runtime
  aborts with a shape mismatch. Before a strategy's first collective, its
  instance numbering moves to a range of its own.
  """
  if is_multi_worker(strategy):
    return  # Workers must agree on keys; one such strategy per process.
  keys = getattr(getattr(strategy, "extended", None), "_collective_keys", None)
  table = getattr(keys, "_instance_key_table", None)
  if not isinstance(table, dict) or getattr(keys, "_estimator_compat_owned",
                                            False):
    return
  keys._estimator_compat_owned = True  # pylint: disable=protected-access
  offset = _strategies_seen[0] * _INSTANCE_KEYS_PER_STRATEGY
  _strategies_seen[0] += 1
  for counters in table.values():
    for device in counters:
      counters[device] += offset


def between_graph(config: Any, choices: Choices) -> bool:
  """Whether train() is the Estimator's between-graph replication.

  A TF_CONFIG cluster with ps tasks and no strategy (neither RunConfig's nor
  --strategy), trained on the graph engine (chosen, or eager execution
  disabled): every chief and worker builds its own graph with its variables
  on the ps tasks (replica_device_setter). The function engine runs such a
  cluster as parameter-server training instead (a ClusterCoordinator).
  """
  if config.train_distribute is not None or not _cluster(config).get("ps"):
    return False
  if choices.strategy.name is not None:
    return False
  return choices.graph_chosen or not tf.executing_eagerly()


def one_local_replica(strategy: Any, config: Any) -> bool:
  """Whether a (built) strategy runs a single replica, in this process only.

  The Estimator's results under such a strategy are those without it.
  """
  return not config.is_distributed and (
      getattr(strategy, "num_replicas_in_sync", None) == 1)


def check(config: Any, choices: Choices) -> None:
  """Fails early (before any checkpoint) on strategies this run cannot use.

  Raises:
    ValueError: an unsupported strategy, or one the graph engine cannot run.
  """
  chosen = fields_set(config, choices.strategy)
  if not chosen or choices.engine != "graph":
    return
  # In TF1 mode the graph engine runs train_distribute (graph_distributed.py
  # says which) and evaluates under a one-replica eval_distribute.
  if tf.executing_eagerly() or chosen[-1].startswith("strategy") or (
      "eval_distribute" in chosen and not one_local_replica(
          config.eval_distribute, config)):
    raise ValueError(
        f"A strategy is set ({chosen[0]}) but the engine is 'graph', which "
        "runs TF1 sessions without tf.distribute (in TF1 mode: "
        "train_distribute, and eval_distribute with one replica). Fix: use "
        "the function engine (RunConfig(engine='function'), the default), or "
        "drop the strategy.")


def fields_set(config: Any, choice: StrategyChoice) -> List[str]:
  """The RunConfig fields (or --strategy) that set a tf.distribute strategy.

  A TF_CONFIG cluster with ps tasks alone is none: the function engine runs
  it under a ParameterServerStrategy, the graph engine between graphs.

  Raises:
    ValueError: an unsupported strategy.
  """
  chosen = [field for field in ("train_distribute", "eval_distribute")
            if is_set(getattr(config, field), field)]
  name = choice.name
  if name not in (None, "default") and config.train_distribute is None:
    chosen.append("strategy (--strategy)")
  return chosen
