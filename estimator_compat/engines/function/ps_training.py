"""train() under ParameterServerStrategy, driven by a ClusterCoordinator.

The chief is the coordinator. Variables live on the `ps` tasks (created once,
eagerly, under their legacy names by VariableCapture); each worker reads the
legacy input_fn's dataset built on that worker; the step function runs
`steps_per_loop` steps of the model_fn per scheduled closure, as Orbit's
trainer does. One closure per worker stays in flight: each time the oldest
finishes (a round), the coordinator schedules the next, counts the steps,
logs, checks for NaN, writes summaries and runs the hooks; at a checkpoint it
waits for the closures in flight and reads the exact global step (on a ps).

Hooks: steps run remotely and asynchronously, so a hook can fetch only the
global step here; a hook asking for other tensors gets an error that names
the alternatives. A worker that dies is survived: the coordinator
reschedules its closures on the others.
"""

import collections
import time
from typing import Any, Dict, Optional, Sequence

import numpy as np
import tensorflow as tf
from tensorflow.python.distribute.coordinator import remote_value  # pylint: disable=g-direct-tensorflow-import

from estimator_compat import checkpoint_reading
from estimator_compat.distribute import strategies
from estimator_compat import tf_logging as logging
from estimator_compat.engines.function import variable_saver
from estimator_compat.engines.function import scaffold_fields
from estimator_compat.engines.function import tf1_code
from estimator_compat.engines.function.legacy_updates import (
    layer_updates_in_collection)
from estimator_compat.engines.function.session import (
    EagerSession, HookRunner, UnsupportedOnFunctionEngine)
from estimator_compat.engines.function.variables import VariableCapture
from estimator_compat.engines.graph_hooks import GUARD_WARNING
from estimator_compat.fn_args import fn_args
from estimator_compat.hooks import StopAtStepHook
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.model_fn_call import ModelSetup, call_model_fn

_PS_HOOK_FIX = (
    "On parameter-server training, steps run remotely and asynchronously, so "
    "hooks can fetch only the global step. Fix: log with "
    "RunConfig(log_step_count_steps=...), act on checkpoints with "
    "saving_listeners, or run this hook under MirroredStrategy / "
    "MultiWorkerMirroredStrategy.")


# Step functions and input iterators of finished train() calls. Deleting a
# function that ran on the cluster blocks in the eager context's
# remove_function (seen on TF 2.21), so they live as long as the process.
# A step function is also reused by later train() calls of the same
# Estimator: no retrace, no new registration on the workers (variables are
# restored from the checkpoint at each call, as always).
_KEEP_ALIVE = []
_STEP_FUNCTIONS: Dict[Any, Any] = {}


class _StepFunction:
  """The model_fn as a tf.function over a per-worker iterator."""

  def __init__(self, setup: ModelSetup, strategy: tf.distribute.Strategy):
    self._setup = setup
    self._strategy = strategy
    self.capture = VariableCapture()
    self.graph: Optional[tf.Graph] = None
    self.spec = None
    self.function = tf.function(self._steps, autograph=False)

  def _replica(self, features, labels):
    spec = call_model_fn(self._setup, features, labels, ModeKeys.TRAIN)
    scaffold_fields.check(spec.scaffold, "train")
    if self.spec is None:
      self.spec = spec
    with tf.control_dependencies([spec.train_op]):
      return tf.identity(spec.loss)

  def _steps(self, iterator, num_steps):
    self.graph = tf.compat.v1.get_default_graph()
    with self._strategy.scope(), self.capture.scope(
        self._setup.config.tf_random_seed, seed_eagerly=False), (
            layer_updates_in_collection()):
      tf.compat.v1.train.get_or_create_global_step()

      def body(i, unused_loss):
        # At the top-level name scope, as in a graph: no "while/" prefix on
        # variables created by name (v1 optimizers' beta1_power).
        with tf.compat.v1.get_default_graph().name_scope(""):
          return step(i)

      def step(i):
        element = next(iterator)
        if isinstance(element, tuple) and len(element) == 2:
          features, labels = element
        else:
          features, labels = element, None
        loss = self._strategy.run(self._replica, args=(features, labels))
        return i + 1, tf.reshape(tf.cast(loss, tf.float32), [])

      _, loss = tf.while_loop(lambda i, _: i < num_steps, body,
                              (tf.constant(0, tf.int64), tf.constant(0.0)))
    return loss


class _Hooks:
  """Runs SessionRunHooks once per round with the global step only."""

  def __init__(self, hooks: Sequence[Any], global_step: tf.Variable):
    self._graph = tf.Graph()
    with self._graph.as_default():
      self._step = tf.compat.v1.train.get_or_create_global_step()
      self._read = tf.identity(self._step, name="global_step_read")
      self._graph.add_to_collection("__global_step_read_key",
                                    self._read)
      self.runner = HookRunner(hooks)
      self.runner.begin()
    self._global_step = global_step
    self._names = {self._step.name, self._read.name,
                   self._step.name.split(":")[0]}
    self.runner.after_create_session(EagerSession(
        self._graph, lambda fetches: tf.nest.map_structure(self._value,
                                                           fetches)))

  def _is_global_step(self, name) -> bool:
    base = str(name).split(":")[0]
    return name in self._names or base == "global_step" or base.startswith(
        "global_step/")

  def _value(self, item):
    name = getattr(item, "name", item)
    if self._is_global_step(name):
      return self._global_step.numpy()
    raise UnsupportedOnFunctionEngine(
        f"A hook asked for {name!r}. {_PS_HOOK_FIX}")

  def before(self):
    keys = self.runner.before_run(self._graph, {})
    for key in keys:
      name = key.split(":", 1)[1]
      if not self._is_global_step(name):
        raise UnsupportedOnFunctionEngine(
            f"A hook asked for {name!r}. {_PS_HOOK_FIX}")
    return keys

  def after(self, keys, step):
    self.runner.after_run({key: np.int64(step) for key in keys})


def _per_worker_iterator(setup, input_fn, strategy, coordinator):
  # pylint: disable=g-import-not-at-top
  from estimator_compat.engines.function.input_pipeline import make_dataset

  def dataset_fn(context):
    return make_dataset(setup, input_fn, ModeKeys.TRAIN, context,
                        distributed=True)

  def per_worker_fn():
    if "input_context" in fn_args(input_fn):
      # Each worker's input_fn gets its own InputContext (pipeline id).
      return strategy.distribute_datasets_from_function(dataset_fn)
    # The plain dataset: the distributed wrapper costs ~20% steps/s on a
    # small model, and this input_fn has no use for a context.
    return dataset_fn(None)

  return iter(coordinator.create_per_worker_dataset(per_worker_fn))


def _join(coordinator, setup: ModelSetup, current: int) -> None:
  """Waits for every scheduled closure; a lost ps becomes the clear error."""
  try:
    coordinator.join()
  except tf.errors.OutOfRangeError:
    pass  # End of input: what ran is counted by the caller.
  except (tf.errors.UnavailableError, tf.errors.AbortedError,
          tf.errors.CancelledError) as e:
    raise RuntimeError(_lost_ps_message(setup, current, e)) from e


def _fetch_loss(remote, global_step: tf.Variable) -> Optional[float]:
  """The loss a finished closure returned; None if its worker is gone.

  A closure's result stays on its worker until fetched. A worker lost after
  its closure finished (its steps applied on the ps) takes the loss with it:
  the steps count, the loss is unknown. Any other error is raised; one that
  comes from a lost ps is raised by reading the global step (on a ps).
  """
  try:
    return float(remote.fetch())
  except (tf.errors.UnavailableError, tf.errors.AbortedError,
          tf.errors.CancelledError):
    finished = (getattr(remote, "_status", None) is
                remote_value.RemoteValueStatus.READY and
                getattr(remote, "_error", True) is None)
    if not finished:
      raise
    global_step.numpy()  # Raises if the ps is gone too.
    logging.warning("A worker was lost after it finished its steps; they "
                    "count, their loss is unknown.")
    return None


def train(*, setup: ModelSetup, input_fn, hooks: Sequence[Any],
          steps: Optional[int], max_steps: Optional[int],
          saving_listeners: Sequence[Any],
          strategy: tf.distribute.Strategy) -> Optional[float]:
  """Trains until steps/max_steps or the end of input; returns last loss."""
  config = setup.config
  coordinator = strategies.coordinator(strategy)
  num_workers = max(1, strategy.extended._num_workers)  # pylint: disable=protected-access
  if config.tf_random_seed is not None:
    # Before the coordinator's threads start (seeding while they run
    # deadlocks); variables are created eagerly, where the graph seed does
    # not reach.
    tf.keras.utils.set_random_seed(config.tf_random_seed)
  with strategy.scope():
    iterator = _per_worker_iterator(setup, input_fn, strategy, coordinator)
    key = (id(setup), id(strategy))
    if key not in _STEP_FUNCTIONS:
      _STEP_FUNCTIONS[key] = (setup, strategy, _StepFunction(setup, strategy))
    step_fn = _STEP_FUNCTIONS[key][2]
    _KEEP_ALIVE.append(iterator)
    # A zero-step closure traces the model and creates its variables (on the
    # ps tasks) without consuming input.
    with tf1_code.graph_only_errors(ModeKeys.TRAIN):
      coordinator.schedule(step_fn.function,
                           args=(iterator, tf.constant(0, tf.int64)))
    coordinator.join()
  variables = variables_for_names(step_fn.capture.saveable_by_name())
  global_step = variables["global_step"]
  variable_saver.restore_or_warm_start(
      setup, variables, checkpoint_reading.latest_checkpoint(setup.model_dir))
  writer = variable_saver.CheckpointWriter(
      setup, variables, global_step, step_fn.graph, saving_listeners)
  start = int(global_step.numpy())
  target = max_steps if max_steps is not None else (
      start + steps if steps is not None else None)
  all_hooks = list(hooks) + list(step_fn.spec.training_hooks) + (
      list(step_fn.spec.training_chief_hooks) if config.is_chief else [])
  hook_runner = _Hooks(all_hooks, global_step)
  summaries = _Summaries(setup) if config.is_chief else None
  writer.begin()
  if target is not None and start >= target:
    logging.info("Skipping training since max_steps has already saved.")
  current, last_loss, fix_step, checked = start, None, False, False
  inflight = collections.deque()  # (RemoteValue, steps) in schedule order.
  rounds, last_log = 0, (time.time(), start)
  while (target is None or current < target) and (
      not hook_runner.runner.stop_requested):
    keys = hook_runner.before()
    remaining = None if target is None else target - current
    try:
      # One closure per worker stays in flight: each worker starts its next
      # steps as soon as its last ones finish, as the Estimator's workers
      # ran free. (Joining every round made all workers start each round
      # from the same variables; it cost the seed program ~2 points of
      # accuracy with 2 workers, see docs/decisions.md.)
      while len(inflight) < num_workers:
        pending = sum(n for _, n in inflight)
        n = config.steps_per_loop if remaining is None else min(
            config.steps_per_loop, remaining - pending)
        if n <= 0:
          break
        inflight.append((coordinator.schedule(
            step_fn.function, args=(iterator, tf.constant(n, tf.int64))), n))
      remote, scheduled = inflight.popleft()
      loss = _fetch_loss(remote, global_step)
      if loss is not None:
        last_loss = loss
    except tf.errors.OutOfRangeError:
      logging.info("Input ended; stopping training.")
      break
    except (tf.errors.UnavailableError, tf.errors.AbortedError,
            tf.errors.CancelledError) as e:
      raise RuntimeError(_lost_ps_message(setup, current, e)) from e
    if not checked:
      checked = True
      fix_step = int(global_step.numpy()) == current
      if fix_step:
        logging.warning(GUARD_WARNING)
    if fix_step:
      global_step.assign_add(scheduled)
    # Counted here, not read from the ps each round (a round trip per
    # round); read back at checkpoints, where it must be exact.
    before, current = current, current + scheduled
    if writer.due(current):
      # The saved step must be exact: settle the closures still in flight
      # (counting them now, not again when they would have been fetched).
      _join(coordinator, setup, current)
      settled = sum(n for _, n in inflight)
      inflight.clear()
      if fix_step and settled:
        global_step.assign_add(settled)
      current = int(global_step.numpy())
    rounds += 1
    if loss is not None and not np.isfinite(loss):
      raise tf.compat.v1.train.NanLossDuringTrainingError()
    hook_runner.after(keys, current)
    if config.log_step_count_steps and (
        current - last_log[1] >= config.log_step_count_steps):
      now = time.time()
      rate = (current - last_log[1]) / max(now - last_log[0], 1e-9)
      # The Estimator's StepCounterHook and LoggingTensorHook lines.
      logging.info("global_step/sec: %g", rate)
      logging.info("loss = %s, step = %d (%.3f sec)", last_loss, current,
                   now - last_log[0])
      if summaries is not None:
        summaries.scalar("global_step/sec", rate, current)
      last_log = (now, current)
    if summaries is not None and loss is not None and (
        config.save_summary_steps) and (
        rounds == 1 or current // config.save_summary_steps >
        before // config.save_summary_steps):
      summaries.scalar("loss", last_loss, current)
    if writer.after_step(current):
      break
  if inflight:  # Stopped early (a hook, end of input): let them finish.
    _join(coordinator, setup, current)
    if fix_step:
      global_step.assign_add(sum(n for _, n in inflight))
    inflight.clear()
  writer.end()
  hook_runner.runner.end()
  if summaries is not None:
    summaries.close()
  logging.info("Loss for final step: %s.", last_loss)
  return last_loss


def _lost_ps_message(setup: ModelSetup, step: int, error: Exception) -> str:
  latest = checkpoint_reading.latest_checkpoint(setup.model_dir)
  return (
      f"Parameter-server training lost a task it cannot do without (a ps; "
      f"lost workers are survived) near global step {step}: "
      f"{str(error).splitlines()[0][:300]} The last checkpoint is {latest}. "
      "Fix: restart the whole cluster (every task, same TF_CONFIG roles); "
      "training resumes from the last checkpoint.")


class _Summaries:
  """Scalars the coordinator writes to model_dir (TensorBoard)."""

  def __init__(self, setup: ModelSetup):
    with tf.Graph().as_default():
      self._writer = tf.compat.v1.summary.FileWriterCache.get(setup.model_dir)

  def scalar(self, tag: str, value: float, step: int) -> None:
    summary = tf.compat.v1.Summary()
    summary.value.add(tag=tag, simple_value=float(value))
    self._writer.add_summary(summary, step)

  def close(self) -> None:
    self._writer.flush()


def variables_for_names(variables: Dict[str, Any]) -> Dict[str, Any]:
  """Checkpoint variables; a partitioned one as its shards, saved as slices.

  As TF1 saved a PartitionedVariable: each shard `name/part_K` (and each of
  its optimizer slots `name/part_K/Adam`) is a slice of the full variable
  `name` (`name/Adam`), so the checkpoint holds the full legacy names and
  shapes, and unpartitioned runs restore it as is.
  """
  out, infos = {}, {}
  for name, variable in variables.items():
    if type(variable).__name__ != "ShardedVariable":
      out[name] = variable
      continue
    full_shape = variable.shape.as_list()
    offset = 0
    for k, shard in enumerate(variable.variables):
      part = f"{name}/part_{k}"
      shape = shard.shape.as_list()
      infos[part] = (name, full_shape, [offset] + [0] * (len(shape) - 1),
                     shape)
      offset += shape[0]
      out[part] = shard
  for name, variable in out.items():
    base, slot = name, ""
    while base not in infos and "/" in base:
      base, tail = base.rsplit("/", 1)
      slot = tail + ("/" + slot if slot else "")
    if base not in infos:
      continue
    full_name, full_shape, offset, shape = infos[base]
    rank = variable.shape.rank
    if slot:
      full_name = f"{full_name}/{slot}"
    if rank:
      variable._set_save_slice_info(tf.Variable.SaveSliceInfo(  # pylint: disable=protected-access
          full_name, full_shape[:rank], offset[:rank], shape[:rank]))
  return out
