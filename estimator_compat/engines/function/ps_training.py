"""train() under ParameterServerStrategy, driven by a ClusterCoordinator.

The chief is the coordinator. Variables live on the `ps` tasks (created once,
eagerly, under their legacy names by VariableCapture); each worker reads the
legacy input_fn's dataset built on that worker; the step function runs
`steps_per_loop` steps of the model_fn per scheduled closure, as Orbit's
trainer does. This module sets the call up; the outer loop is the
controller's (engines/controller.py: step counts, the global-step guard,
checkpoints, hooks, NaN, log lines and summaries) and the closures in flight
are the runner's (ps_runner.py).

Hooks: steps run remotely and asynchronously, so a hook can fetch only the
global step here; a hook asking for other tensors gets an error that names
the alternatives. A worker that dies is survived: the coordinator
reschedules its closures on the others.
"""

import contextlib
from typing import Any, Dict, Optional, Sequence

import tensorflow as tf

from estimator_compat.checkpoints import checkpoint_reading
from estimator_compat.distribute import strategies
from estimator_compat.engines.reports import StepReports
from estimator_compat.engines.controller import TrainingController
from estimator_compat.engines.controller import TrainOptions
from estimator_compat.engines.hook_cadence import HookCadence
from estimator_compat.engines.function import coordinator_log
from estimator_compat.engines.function import outside_variables
from estimator_compat.engines.function import ps_runner
from estimator_compat.engines.function import scaffold_fields
from estimator_compat.engines.function import tf1_code
from estimator_compat.engines.function import variable_saver
from estimator_compat.engines.function.input_pipeline import (check_element,
                                                              make_dataset)
from estimator_compat.engines.function.legacy_updates import (
    layer_updates_in_collection)
from estimator_compat.engines.function.variables import VariableCapture
from estimator_compat.front.fn_args import fn_args
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import ModelSetup, call_model_fn


# Their names before ps_runner.py; tests use them.
_Hooks = ps_runner.GlobalStepHooks


# Step functions and input iterators of finished train() calls. Deleting a
# function that ran on the cluster blocks in the eager context's
# remove_function (seen on TF 2.21), so they live as long as the process.
# Each train() call makes and traces its own step function: the Estimator
# built a new graph per call, calling model_fn once per call
# (tests/test_model_fn_calls.py), and the variables are restored from the
# checkpoint at each call.
_KEEP_ALIVE = []


class _StepFunction:
  """The model_fn as a tf.function over a per-worker iterator."""

  def __init__(self, setup: ModelSetup, strategy: tf.distribute.Strategy):
    self._setup = setup
    self._strategy = strategy
    self.capture = VariableCapture()
    self.graph: Optional[tf.Graph] = None
    self.spec = None
    # Not a model variable (not captured, not saved): where each closure
    # leaves its last loss for the log lines and summaries (ps_runner.py).
    with strategy.scope():
      self.last_loss = tf.Variable(0.0, trainable=False,
                                   name="estimator_compat_last_loss")
    self.function = tf.function(self._steps, autograph=False)

  def _replica(self, features, labels):
    with outside_variables.refused(lambda: self.capture.variables), (
        tf1_code.tf1_tensor_equality()), tf1_code.tf1_non_slot_lookup(), (
            tf1_code.tf1_gradients_in_control_flow()):
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
        # With jit_compile, the model's operations are marked for XLA.
        with (tf.xla.experimental.jit_scope(compile_ops=True)
              if self._setup.config.jit_compile else
              contextlib.nullcontext()):
          loss = self._strategy.run(self._replica, args=(features, labels))
        return i + 1, tf.reshape(tf.cast(loss, tf.float32), [])

      # A non-finite loss ends the closure at its step, and the closure
      # fails (the runner then raises NanLossDuringTrainingError, as at one
      # step per closure). Nothing is returned: see ps_runner.py.
      ran, loss = tf.while_loop(
          lambda i, loss: tf.logical_and(
              i < num_steps, tf.logical_or(i == 0, tf.math.is_finite(loss))),
          body, (tf.constant(0, tf.int64), tf.constant(0.0)))
      # Only a closure that ran a step leaves its loss: the zero-step one
      # that traces (not waited for) may finish after the first steps.
      stored = tf.cond(ran > 0, lambda: self.last_loss.assign(loss).op,
                       tf.no_op)
      with tf.control_dependencies([stored]):
        tf.debugging.Assert(tf.math.is_finite(loss),
                            [ps_runner.NAN_MARKER, loss])


def _per_worker_iterator(setup, input_fn, strategy, coordinator):
  def dataset_fn(context):
    return check_element(make_dataset(setup, input_fn, ModeKeys.TRAIN,
                                      context, distributed=True), input_fn)

  def per_worker_fn():
    if "input_context" in fn_args(input_fn):
      # Each worker's input_fn gets its own InputContext (pipeline id).
      return strategy.distribute_datasets_from_function(dataset_fn)
    # The plain dataset: the distributed wrapper costs ~20% steps/s on a
    # small model, and this input_fn has no use for a context.
    return dataset_fn(None)

  return iter(coordinator.create_per_worker_dataset(per_worker_fn))


def train(*, setup: ModelSetup, input_fn, hooks: Sequence[Any],
          steps: Optional[int], max_steps: Optional[int],
          saving_listeners: Sequence[Any],
          strategy: tf.distribute.Strategy) -> Optional[float]:
  """Trains until steps/max_steps or the end of input; returns last loss."""
  config = setup.config
  coordinator_log.shorten_remote_errors()
  coordinator = strategies.coordinator(strategy)
  num_workers = max(1, strategy.extended._num_workers)  # pylint: disable=protected-access
  if config.tf_random_seed is not None:
    # Before the coordinator's threads start (seeding while they run
    # deadlocks); variables are created eagerly, where the graph seed does
    # not reach.
    tf.keras.utils.set_random_seed(config.tf_random_seed)
  with strategy.scope():
    iterator = _per_worker_iterator(setup, input_fn, strategy, coordinator)
    step_fn = _StepFunction(setup, strategy)
    _KEEP_ALIVE.extend((step_fn, iterator))
    # A zero-step closure traces the model and creates its variables (on the
    # ps tasks) without consuming input. Scheduling it traces on this task,
    # which is all the restore below needs; it is not waited for (a join
    # here cost 0.3-0.6 s per call at 2 ps x 4 workers): it reads no model
    # variable, and a failure of it surfaces at the next wait or schedule.
    with tf1_code.graph_only_errors(ModeKeys.TRAIN):
      coordinator.schedule(step_fn.function,
                           args=(iterator, tf.constant(0, tf.int64)))
  variables = variables_for_names(step_fn.capture.saveable_by_name())
  global_step = variables["global_step"]
  variable_saver.restore_or_warm_start(
      setup, variables, checkpoint_reading.latest_checkpoint(setup.model_dir))
  writer = variable_saver.CheckpointWriter(
      setup, variables, global_step, step_fn.graph, saving_listeners)
  all_hooks = list(hooks) + list(step_fn.spec.training_hooks) + (
      list(step_fn.spec.training_chief_hooks) if config.is_chief else [])
  hook_port = ps_runner.GlobalStepHooks(all_hooks, global_step)
  # Steps run remotely: no hook can fetch the loss, so the controller keeps
  # the log lines, summaries and NaN check the standard hooks keep elsewhere.
  reports = StepReports(
      log_step_count_steps=config.log_step_count_steps,
      save_summary_steps=config.save_summary_steps,
      start=int(global_step.numpy()),
      summary_dir=setup.model_dir if config.is_chief else None)
  runner = ps_runner.PsRunner(
      setup=setup, coordinator=coordinator, step_function=step_fn.function,
      iterator=iterator, num_workers=num_workers, global_step=global_step,
      last_loss=step_fn.last_loss)
  cadence = None
  if config.steps_per_loop is None and num_workers == 1:
    # With one worker a closure's steps end where they were planned; with
    # more, others run on meanwhile (one step per closure, as before).
    cadence = HookCadence(hook_port.runner.hooks, None,
                          hook_port.runner.session)
  controller = TrainingController(
      runner=runner, hooks=hook_port, checkpoints=writer,
      global_step=global_step,
      options=TrainOptions(steps=steps, max_steps=max_steps,
                           steps_per_loop=config.steps_per_loop,
                           check_nan=True),
      reports=reports, cadence=cadence)
  with runner.lost_ps_stops_training():
    return controller.run()


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
    prefix = ""
    if base not in infos:
      # A Keras optimizer's slot of a shard: `training/Adagrad/name/part_K/
      # accumulator` is a slice of `training/Adagrad/name/accumulator`.
      base, slot, prefix = _prefixed_slot(name, infos)
    if base not in infos:
      continue
    full_name, full_shape, offset, shape = infos[base]
    rank = variable.shape.rank
    full_name = prefix + full_name
    if slot:
      full_name = f"{full_name}/{slot}"
    if rank:
      variable._set_save_slice_info(tf.Variable.SaveSliceInfo(  # pylint: disable=protected-access
          full_name, full_shape[:rank], offset[:rank], shape[:rank]))
  return out


def _prefixed_slot(name: str, infos: Dict[str, Any]):
  """(shard, slot, prefix) of `prefix + shard + "/" + slot`, else ("", "", "").
  """
  for part in infos:
    marker = "/" + part + "/"
    at = name.find(marker)
    if at >= 0:
      return part, name[at + len(marker):], name[:at + 1]
  return "", "", ""
