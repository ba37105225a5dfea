"""Which tf.distribute strategy a train or evaluate call runs under.

Legacy code passes strategies through `RunConfig(train_distribute=...,
eval_distribute=...)`, often TF1-era objects. The function engine runs TF2
step functions, so V1 strategy objects are mapped to their V2 counterparts
(one log line says so). The default strategy means "no strategy".
"""

from typing import Any, Optional

import tensorflow as tf
from absl import logging

_SUPPORTED = ("tf.distribute.MirroredStrategy", "tf.distribute.OneDeviceStrategy")


def _v1_mirrored_to_v2(strategy: Any) -> tf.distribute.Strategy:
  devices = list(strategy.extended.worker_devices)
  return tf.distribute.MirroredStrategy(devices=devices)


def _v1_one_device_to_v2(strategy: Any) -> tf.distribute.Strategy:
  return tf.distribute.OneDeviceStrategy(strategy.extended.worker_devices[0])


_V1_TO_V2 = {
    "MirroredStrategyV1": _v1_mirrored_to_v2,
    "OneDeviceStrategyV1": _v1_one_device_to_v2,
}


def to_v2(strategy: Any, field: str) -> Optional[tf.distribute.Strategy]:
  """The V2 strategy to run under, or None for plain single-device runs.

  Args:
    strategy: what RunConfig holds (None, a V1 or a V2 strategy).
    field: the RunConfig field it came from, for messages.

  Raises:
    ValueError: a strategy this engine cannot run, with the fix.
  """
  if strategy is None:
    return None
  name = type(strategy).__name__
  if name in _V1_TO_V2:
    converted = _V1_TO_V2[name](strategy)
    logging.info("RunConfig.%s: running the TF1 %s as its TF2 counterpart "
                 "%s on %s.", field, name, type(converted).__name__,
                 list(converted.extended.worker_devices))
    return converted
  if isinstance(strategy, tf.distribute.Strategy):
    if name in ("_DefaultDistributionStrategy",):
      return None
    if isinstance(strategy, (tf.distribute.MirroredStrategy,
                             tf.distribute.OneDeviceStrategy)) and not (
                                 isinstance(strategy, tf.distribute.
                                            MultiWorkerMirroredStrategy)):
      return strategy
  raise ValueError(
      f"RunConfig.{field}={name} is not supported yet: this release runs "
      f"{' and '.join(_SUPPORTED)} (or their tf.compat.v1 forms). Fix: pass "
      "one of those, or leave it None to train on one device.")


def for_training(config: Any) -> Optional[tf.distribute.Strategy]:
  """The strategy `train()` runs under (RunConfig.train_distribute)."""
  return _cached(config, "train_distribute")


def for_evaluation(config: Any) -> Optional[tf.distribute.Strategy]:
  """The strategy `evaluate()` runs under (RunConfig.eval_distribute).

  As in the Estimator, evaluation is distributed only when eval_distribute
  is set; train_distribute alone does not distribute evaluation.
  """
  return _cached(config, "eval_distribute")


def _cached(config: Any, field: str) -> Optional[tf.distribute.Strategy]:
  # A converted V1 strategy is built once per RunConfig, so its variables
  # and devices stay the same across train() and evaluate() calls.
  cache = config.__dict__.setdefault("_v2_strategies", {})
  if field not in cache:
    cache[field] = to_v2(getattr(config, field), field)
    _own_collective_groups(cache[field])
  return cache[field]


_INSTANCE_KEYS_PER_STRATEGY = 1_000_000
_strategies_seen = [0]


def _own_collective_groups(strategy: Optional[tf.distribute.Strategy]) -> None:
  """Gives a strategy collective instance keys no other strategy here uses.

  Every MirroredStrategy numbers its collective group from 1 and its
  instances from 100, so a second one in the same process (eval_distribute
  as a separate object, or one Estimator after another) issues the same
  (group, instance) keys as the first, and TensorFlow's collective runtime
  aborts with a shape mismatch. Before a strategy's first collective, its
  instance numbering moves to a range of its own.
  """
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


def check(config: Any) -> None:
  """Fails early (before any checkpoint) on strategies this run cannot use.

  Raises:
    ValueError: an unsupported strategy, or a strategy on the graph engine.
  """
  chosen = [field for field, strategy in (
      ("train_distribute", for_training(config)),
      ("eval_distribute", for_evaluation(config))) if strategy is not None]
  if chosen and config.engine == "graph":
    raise ValueError(
        f"RunConfig.{chosen[0]} is set but the engine is 'graph', which runs "
        "TF1 sessions without tf.distribute. Fix: use the function engine "
        "(RunConfig(engine='function'), the default), or drop the strategy.")
