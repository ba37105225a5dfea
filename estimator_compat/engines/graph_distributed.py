"""The graph engine's train() under a strategy, in TF1 mode, as the Estimator.

A program that disables eager execution (tf.compat.v1.disable_eager_execution()
at the top, as ported TF1 code does) runs on the graph engine; with
`RunConfig(train_distribute=MirroredStrategy(...))` it trains as the
Estimator did in TF1 mode: the TF1 form of the strategy, the input_fn's
Dataset split across replicas by `make_input_fn_iterator`, the model_fn
called once per replica, the replicas' losses reduced as the Estimator
reported them, and the replicas' train ops grouped. Hooks and the Scaffold
come from the first replica, as in the Estimator.

Runs: MirroredStrategy and OneDeviceStrategy (TF1 or TF2 objects), and
without a cluster the TF1 ParameterServerStrategy and MultiWorkerMirrored-
Strategy, in one process; MultiWorkerMirroredStrategy on a TF_CONFIG cluster
(on_workers). eval_distribute only with one replica (evaluated without it).
"""

from typing import Any, Dict, Optional

import tensorflow as tf

# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.distribute import distribute_coordinator as dc_lib
from tensorflow.python.training import training_util

from estimator_compat.distribute import strategies
from estimator_compat.front.configuration import Choices
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import (ModelSetup, call_model_fn,
                                            invoke_input_fn)
from estimator_compat.spec import EstimatorSpec

_v1 = tf.compat.v1
# Exactly these classes (not subclasses): the TF1 strategy the graph engine
# runs is rebuilt from their devices, which would drop a subclass's changes.
_RUNS = (tf.distribute.MirroredStrategy, _v1.distribute.MirroredStrategy,
         tf.distribute.OneDeviceStrategy, _v1.distribute.OneDeviceStrategy)
_MULTI_WORKER = (tf.distribute.MultiWorkerMirroredStrategy,
                 _v1.distribute.experimental.MultiWorkerMirroredStrategy)
_V1_PARAMETER_SERVER = _v1.distribute.experimental.ParameterServerStrategy


def unsupported(config: Any, choices: Choices) -> Optional[str]:
  """Why the graph engine cannot train under this config; None if it can.

  Strategies run on the graph engine only with eager execution disabled (TF1
  mode): MirroredStrategy and OneDeviceStrategy, and without a cluster also
  the TF1 ParameterServerStrategy and MultiWorkerMirroredStrategy (as the
  Estimator ran them on one machine); MultiWorkerMirroredStrategy on a
  TF_CONFIG cluster. A TF_CONFIG cluster with ps tasks and no strategy
  trains between graphs (graph_between.py).
  """
  fields = [f for f in strategies.fields_set(config, choices.strategy)
            if f != "eval_distribute"]
  if not fields:
    if config.train_distribute is None and config.is_distributed and (
        config.cluster_spec.as_dict().get("ps")) and (
            not strategies.between_graph(config, choices)):
      return ("the graph engine trains a TF_CONFIG cluster with ps tasks "
              "only when chosen (RunConfig(engine='graph')) or in TF1 mode")
    return None
  if tf.executing_eagerly():
    return (f"the graph engine runs a strategy ({fields[0]}) only in TF1 mode "
            "(eager execution disabled)")
  if fields != ["train_distribute"]:
    return (f"the graph engine does not run {fields[-1]} (it runs "
            "train_distribute=MirroredStrategy or OneDeviceStrategy)")
  name = type(config.train_distribute).__name__
  if is_multi_worker(config):
    return None
  if type(config.train_distribute) is _V1_PARAMETER_SERVER:
    if config.is_distributed:
      return (f"the graph engine does not run train_distribute={name} on a "
              "cluster (it trains a cluster with ps tasks and no strategy "
              "between graphs, as the Estimator did)")
    return None
  if type(config.train_distribute) not in _RUNS:
    return (f"the graph engine does not run train_distribute={name} (it runs "
            "MirroredStrategy and OneDeviceStrategy)")
  return None


def evaluation_unsupported(config: Any) -> Optional[str]:
  """Why the graph engine cannot evaluate under eval_distribute; None if it
  can: without one (or under one replica in this process, which the
  Estimator's results do not tell from none)."""
  strategy = config.eval_distribute
  if not strategies.is_set(strategy, "eval_distribute"):
    return None
  if strategies.one_local_replica(strategy, config):
    return None
  return ("the graph engine does not run eval_distribute with more than one "
          "replica")


def wanted(config: Any, choices: Choices) -> bool:
  """True if this config's train() runs under a strategy on the graph engine.

  Raises:
    ValueError: a strategy the graph engine cannot run, with the fix.
  """
  fields = strategies.fields_set(config, choices.strategy)
  if not fields:
    return False
  reason = unsupported(config, choices)
  if reason:
    raise ValueError(
        f"A strategy is set but {reason}. Fix: use the function engine "
        "(keep eager execution on and set no engine), or drop the strategy.")
  # eval_distribute alone: train() runs without a strategy, as the
  # Estimator trained such a config (it crashed here on a None
  # train_distribute).
  return any(field != "eval_distribute" for field in fields)


def is_multi_worker(config: Any) -> bool:
  """Whether train_distribute is a multi-worker (collective) strategy."""
  return isinstance(config.train_distribute, _MULTI_WORKER)


def on_workers(setup: ModelSetup, saving_listeners, train_fn) -> Any:
  """Runs `train_fn(strategy)` as this TF_CONFIG task, as the Estimator did.

  TensorFlow's distribute coordinator starts this task's standard server,
  configures the TF1 collective strategy for it and runs train_fn with the
  worker context that MonitoredTrainingSession reads (which task
  initializes, saves and writes summaries).

  Raises:
    ValueError: saving_listeners, which the Estimator refused here too.
  """
  if saving_listeners:
    raise ValueError(
        "saving_listeners are not supported under a multi-worker strategy in "
        "TF1 mode (the Estimator refused them too). Fix: drop them, or keep "
        "eager execution on (the function engine runs them).")
  session_config = _v1.ConfigProto()
  session_config.CopyFrom(setup.config.session_config)
  return dc_lib.run_distribute_coordinator(
      train_fn, _v1_strategy(setup.config.train_distribute),
      mode=dc_lib.CoordinatorMode.INDEPENDENT_WORKER,
      session_config=session_config)


def _v1_strategy(strategy: Any) -> Any:
  """The TF1 form of a strategy (itself if already)."""
  if isinstance(strategy, _v1.distribute.Strategy):
    return strategy
  if isinstance(strategy, _MULTI_WORKER):
    return _v1.distribute.experimental.MultiWorkerMirroredStrategy()
  devices = list(strategy.extended.worker_devices)
  if isinstance(strategy, tf.distribute.OneDeviceStrategy):
    return _v1.distribute.OneDeviceStrategy(devices[0])
  return _v1.distribute.MirroredStrategy(devices=devices)


def _split(element: Any):
  if isinstance(element, tuple) and len(element) == 2:
    return element
  return element, None


class DistributedModeGraph:
  """A fresh graph with the strategy, input and per-replica model_fn of train.

  Has what graph.train() reads of its own `_ModeGraph`: graph, global_step,
  input_hooks, spec, and scope() (the strategy's, for the rest of the call).
  """

  def __init__(self, setup: ModelSetup, input_fn, strategy: Any = None):
    self.strategy = strategy or _v1_strategy(setup.config.train_distribute)
    self.graph = tf.Graph()
    strategy = self.strategy
    with self.graph.as_default(), strategy.scope(), (
        strategy._scale_loss_for_estimator_enabled()):  # pylint: disable=protected-access
      _v1.set_random_seed(setup.config.tf_random_seed)
      iterator = strategy.make_input_fn_iterator(
          lambda context: self._dataset(setup, input_fn, context))
      self.input_hooks = [_InitializeIterator(iterator)]
      self.global_step = _v1.train.get_or_create_global_step()
      _v1.add_to_collection(training_util.GLOBAL_STEP_READ_KEY,
                            strategy.extended.read_var(self.global_step))
      features, labels = _split(iterator.get_next())
      self.spec = self._call_on_replicas(setup, features, labels)

  @staticmethod
  def _dataset(setup: ModelSetup, input_fn, context) -> tf.data.Dataset:
    result = invoke_input_fn(setup, input_fn, ModeKeys.TRAIN, context)
    if not isinstance(result, tf.data.Dataset):
      raise ValueError(
          f"Under train_distribute, input_fn must return a tf.data.Dataset, "
          f"got {type(result).__name__}. Fix: return "
          "tf.data.Dataset.from_tensor_slices((features, labels)).batch(n).")
    return result

  def _call_on_replicas(self, setup: ModelSetup, features,
                        labels) -> EstimatorSpec:
    strategy = self.strategy
    specs: Dict[int, EstimatorSpec] = {}

    def replica_fn(replica_features, replica_labels):
      replica = _v1.distribute.get_replica_context().replica_id_in_sync_group
      spec = call_model_fn(setup, replica_features, replica_labels,
                           ModeKeys.TRAIN)
      specs[replica if isinstance(replica, int) else int(
          tf.get_static_value(replica))] = spec
      return spec.loss, spec.train_op

    losses, train_ops = strategy.extended.call_for_each_replica(
        replica_fn, args=(features, labels))
    if getattr(self.graph, "_is_loss_scaled_by_optimizer", False):
      reduce_op = _v1.distribute.get_loss_reduction()
    else:
      reduce_op = tf.distribute.ReduceOp.SUM
    loss = strategy.reduce(reduce_op, losses, axis=None)
    first = specs[min(specs)]
    return first._replace(loss=loss, train_op=strategy.group(train_ops))

  def scope(self):
    return self.strategy.scope()


class _InitializeIterator(_v1.train.SessionRunHook):
  """Initializes the distributed input iterator when the session starts."""

  def __init__(self, iterator):
    self._iterator = iterator

  def begin(self):
    self._initializer = self._iterator.initializer

  def after_create_session(self, session, coord):
    del coord
    session.run(self._initializer)
