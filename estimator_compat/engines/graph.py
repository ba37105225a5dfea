"""The graph engine: each mode on a fresh tf.Graph with TF1 session semantics.

This is the faithful path: the same machinery the legacy Estimator used
(MonitoredTrainingSession, Scaffold, name-based Saver, SessionRunHooks), as
TensorFlow 2.21 still ships it in tf.compat.v1.
"""

import contextlib
import os
import threading
from typing import Any, Dict, Iterator, List, Optional, Sequence

import numpy as np
import tensorflow as tf

# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.training import training_util

from estimator_compat.checkpoints import checkpoint_reading
from estimator_compat.front.eval_progress import EvalProgress
from estimator_compat.front import eval_summary
from estimator_compat.front import front_checks
from estimator_compat.front import keras_metrics
from estimator_compat.front import loss_summary
from estimator_compat.front import predict_input_check
from estimator_compat.checkpoints import replacing_saver
from estimator_compat.front import preemption
from estimator_compat.checkpoints import scaffold_savers
from estimator_compat.front import tf_logging as logging
from estimator_compat.distribute import strategies
from estimator_compat.engines import graph_between
from estimator_compat.engines import graph_distributed
from estimator_compat.engines import init_errors
from estimator_compat.engines import step_read_order
from estimator_compat.engines import summary_read_order
from estimator_compat.engines.graph_hooks import GlobalStepGuardHook
from estimator_compat.engines.graph_hooks import StopAfterNRunsHook
from estimator_compat.hooks import (CheckpointSaverHook, FinalOpsHook,
                                    LoggingTensorHook, NanTensorHook,
                                    SessionRunHook, StopAtStepHook)
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import (ModelSetup, call_input_fn,
                                            call_model_fn)
from estimator_compat.spec import EstimatorSpec

_v1 = tf.compat.v1


class _ModeGraph:
  """A fresh graph with the seed, global_step, input and model_fn of a mode."""

  def __init__(self, setup: ModelSetup, input_fn, mode: str,
               device_fn: Any = None):
    self.graph = tf.Graph()
    # device_fn: the whole graph's (between-graph training), as the Estimator.
    with self.graph.as_default(), self.graph.device(device_fn):
      _v1.set_random_seed(setup.config.tf_random_seed)
      self.global_step = _v1.train.get_or_create_global_step()
      if mode == ModeKeys.TRAIN:  # As the Estimator: hooks read this tensor.
        training_util._get_or_create_global_step_read(self.graph)  # pylint: disable=protected-access
      features, labels, self.input_hooks = call_input_fn(setup, input_fn, mode)
      if mode == ModeKeys.PREDICT:
        labels = None
        predict_input_check.warn_if_endless(features, self.graph)
      with _v1.device(device_fn or setup.config.device_fn):
        self.spec = call_model_fn(setup, features, labels, mode)

  def scope(self):
    return contextlib.nullcontext()


def _ensure_saver(setup: ModelSetup, spec: EstimatorSpec) -> None:
  """Registers the legacy default Saver unless the model brought its own."""
  if spec.scaffold.saver is not None or _v1.get_collection(
      _v1.GraphKeys.SAVERS):
    return
  config = setup.config
  _v1.add_to_collection(
      _v1.GraphKeys.SAVERS,
      replacing_saver.Saver(
          sharded=True,
          max_to_keep=config.keep_checkpoint_max,
          keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
          defer_build=True,
          save_relative_paths=True))


def _check_fits(spec: EstimatorSpec, checkpoint: str) -> None:
  """Checks variable names, unless the model's own saver restores them."""
  if not scaffold_savers.has_custom_saver(spec.scaffold):
    checkpoint_reading.check_fits(checkpoint, _v1.global_variables())


def _restore_or_warm_start(setup: ModelSetup, checkpoint: Optional[str],
                           spec: EstimatorSpec):
  if checkpoint:
    _check_fits(spec, checkpoint)
  elif setup.warm_start is not None:
    _v1.train.warm_start(*setup.warm_start)


def _saver_hook(setup: ModelSetup, spec: EstimatorSpec, chief_hooks: List,
                saving_listeners: Sequence[Any],
                worker_hooks: Sequence[Any] = ()) -> None:
  """Adds the legacy CheckpointSaverHook (with listeners) to chief hooks.

  As in the Estimator, a CheckpointSaverHook among the hooks (train()'s,
  the spec's training or chief hooks) replaces the default one.
  """
  existing = [h for h in list(worker_hooks) + chief_hooks
              if isinstance(h, CheckpointSaverHook)]
  listeners = list(saving_listeners or ())
  if existing:
    for listener in listeners:
      existing[0]._listeners.append(listener)  # pylint: disable=protected-access
    return
  config = setup.config
  if not (config.save_checkpoints_steps or config.save_checkpoints_secs):
    if listeners:
      raise ValueError(front_checks.NO_SAVER_FOR_LISTENERS)
    return
  chief_hooks.append(
      CheckpointSaverHook(
          setup.model_dir,
          save_secs=config.save_checkpoints_secs,
          save_steps=config.save_checkpoints_steps,
          scaffold=spec.scaffold,
          listeners=listeners,
          save_graph_def=config.checkpoint_save_graph_def))


def train(*, setup: ModelSetup, input_fn, hooks: Sequence[SessionRunHook],
          steps: Optional[int], max_steps: Optional[int],
          saving_listeners: Sequence[Any]) -> Optional[float]:
  """Trains until `steps`/`max_steps` or the end of input; returns last loss."""
  if setup.config.jit_compile:
    raise ValueError(
        "RunConfig(jit_compile=True) needs the function engine. Fix: "
        "RunConfig(engine='function') (the default), or jit_compile=False.")
  if setup.config.steps_per_loop_required:
    raise ValueError(
        f"RunConfig(steps_per_loop={setup.config.steps_per_loop}) needs the "
        "function engine; the graph engine runs one step per session call. "
        "Fix: RunConfig(engine='function') (the default), or "
        "steps_per_loop=1.")
  if graph_distributed.wanted(setup.config, setup.choices) and (
      graph_distributed.is_multi_worker(setup.config)) and (
          setup.config.is_distributed):
    return graph_distributed.on_workers(
        setup, saving_listeners, lambda strategy: _train(
            setup, input_fn, hooks, steps, max_steps, (), strategy))
  return _train(setup, input_fn, hooks, steps, max_steps, saving_listeners)


def _train(setup: ModelSetup, input_fn, hooks: Sequence[SessionRunHook],
           steps: Optional[int], max_steps: Optional[int],
           saving_listeners: Sequence[Any],
           strategy: Any = None) -> Optional[float]:
  """train() in this process; `strategy`: a configured multi-worker one."""
  if strategy is not None or graph_distributed.wanted(setup.config,
                                                     setup.choices):
    # TF1 mode with a strategy.
    built = graph_distributed.DistributedModeGraph(setup, input_fn, strategy)
  elif strategies.between_graph(setup.config, setup.choices):
    built = _ModeGraph(setup, input_fn, ModeKeys.TRAIN,
                       graph_between.device_fn(setup.config))
  else:
    built = _ModeGraph(setup, input_fn, ModeKeys.TRAIN)
  spec, config = built.spec, setup.config
  with built.graph.as_default(), built.scope():
    loss_summary.add_loss_summary(spec.loss)
    _restore_or_warm_start(
        setup, checkpoint_reading.latest_checkpoint(setup.model_dir), spec)
    _ensure_saver(setup, spec)
    if not isinstance(built, graph_distributed.DistributedModeGraph):
      # The hooks' step read before the increment, on every run (G13).
      step_read_order.read_before_increment(
          built.graph, [spec.train_op, spec.loss])
      # The summaries' variable reads before the step's updates (G16).
      summary_read_order.reads_before_updates(
          spec.train_op, summary_read_order.graph_summaries(
              built.graph, spec.scaffold.summary_op))
    # The Estimator's order: the user's hooks see a step before
    # NanTensorHook can stop training on it.
    worker_hooks = built.input_hooks + list(hooks)
    if steps is not None or max_steps is not None:
      worker_hooks.append(StopAtStepHook(num_steps=steps, last_step=max_steps))
    worker_hooks.append(NanTensorHook(spec.loss))
    if config.log_step_count_steps:  # None turns loss logging off.
      worker_hooks.append(
          LoggingTensorHook({"loss": spec.loss, "step": built.global_step},
                            every_n_iter=config.log_step_count_steps))
    worker_hooks += list(spec.training_hooks)
    chief_hooks = list(spec.training_chief_hooks)
    save_secs, save_steps = 0, None
    if strategy is None:
      _saver_hook(setup, spec, chief_hooks, saving_listeners, worker_hooks)
    else:  # As the Estimator: every worker saves (others to tmp_worker_N/).
      save_secs = config.save_checkpoints_secs
      save_steps = config.save_checkpoints_steps
    # chief_only_hooks run before MonitoredTrainingSession's own summary
    # hooks (as in the Estimator); the guard goes first of all, so that a
    # step it advances is the step the first summary is written at.
    guard = GlobalStepGuardHook()
    if not config.is_chief:
      worker_hooks = [guard] + worker_hooks
    loss = None
    try:
      # The Estimator's session setup (variable initializers first, then the
      # input's iterator).
      session = _v1.train.MonitoredTrainingSession(
          master=config.master,
          is_chief=config.is_chief,
          checkpoint_dir=setup.model_dir,
          scaffold=spec.scaffold,
          hooks=worker_hooks,
          chief_only_hooks=[guard] + chief_hooks if config.is_chief else None,
          save_checkpoint_secs=save_secs,
          save_checkpoint_steps=save_steps,
          save_summaries_steps=config.save_summary_steps,
          config=config.session_config,
          max_wait_secs=config.session_creation_timeout_secs,
          log_step_count_steps=config.log_step_count_steps)
    except tf.errors.FailedPreconditionError as error:
      raise init_errors.explained(error) from error
    with session:
      # A preemption signal ends the loop between steps; leaving the session
      # runs the hooks' end(): CheckpointSaverHook saves the step reached.
      while not session.should_stop() and not preemption.requested():
        _, loss = session.run([spec.train_op, spec.loss])
  logging.info("Loss for final step: %s.", loss)
  return loss


def metric_ops(spec: EstimatorSpec, loss_weight=None):
  """(value ops, update ops) of eval_metric_ops plus the mean `loss`.

  `loss_weight` weighs this batch's loss in the mean (0 for the empty batch
  a replica gets when the input ends unevenly under a strategy).
  """
  # The Estimator's wording, quotes included.
  for reserved in ('"loss"', "`global_step`"):
    if reserved[1:-1] in spec.eval_metric_ops:
      raise ValueError(
          f"Metric with name {reserved} is not allowed, because Estimator "
          "already defines a default metric with the same name. Fix: rename "
          "the metric.")
  values, updates = {}, []
  for name, metric in spec.eval_metric_ops.items():
    if isinstance(metric, tf.keras.metrics.Metric):
      values[name], update = keras_metrics.value_and_update(name, metric)
      updates.append(update)
    else:
      values[name], update = metric
      updates.append(update)
  values["loss"], loss_update = _v1.metrics.mean(spec.loss,
                                                 weights=loss_weight)
  updates.append(loss_update)
  # The Estimator returned its metrics sorted by name, `loss` among them
  # (global_step is added after them).
  return dict(sorted(values.items())), tf.group(*updates)


_eval_events = threading.local()  # .suffix: see own_eval_events_file.


@contextlib.contextmanager
def own_eval_events_file(suffix: str) -> Iterator[None]:
  """While active, this thread's evaluations write an events file of its own.

  An events file is named after the second and the host only. A cluster's
  chief evaluates once after training (known difference
  between-graph-chief-evaluates) while the evaluator task evaluates the
  same checkpoint: on one host, within one second, both processes wrote
  one file and corrupted it. The chief's evaluation ends its file name
  with `suffix` instead.
  """
  previous = getattr(_eval_events, "suffix", None)
  _eval_events.suffix = suffix
  try:
    yield
  finally:
    _eval_events.suffix = previous


def write_eval_summary(eval_dir: str, results: Dict[str, Any],
                       global_step: int,
                       checkpoint_path: Optional[str] = None) -> None:
  """Writes the results (and the checkpoint's path) as the Estimator did."""
  # One cached writer per directory, as the Estimator: a new writer per call
  # could reuse (and overwrite) an events file name within the same second.
  suffix = getattr(_eval_events, "suffix", None)
  with tf.Graph().as_default():
    writer = (_v1.summary.FileWriter(eval_dir, filename_suffix=suffix)
              if suffix else _v1.summary.FileWriterCache.get(eval_dir))
  writer.add_summary(eval_summary.summary_of(results), global_step)
  if checkpoint_path:
    writer.add_summary(eval_summary.checkpoint_path_summary(checkpoint_path),
                       global_step)
  if suffix:
    writer.close()
  else:
    writer.flush()


def evaluate(*, setup: ModelSetup, input_fn, hooks: Sequence[SessionRunHook],
             steps: Optional[int],
             checkpoint_path: Optional[str]) -> Dict[str, Any]:
  """Evaluates a checkpoint; returns metrics, `loss` and `global_step`."""
  built = _ModeGraph(setup, input_fn, ModeKeys.EVAL)
  spec, config = built.spec, setup.config
  with built.graph.as_default():
    values, update_op = metric_ops(spec)
    final = dict(values, global_step=built.global_step)
    if not checkpoint_path:
      logging.info(
          "Could not find trained model in model_dir: %s, running "
          "initialization to evaluate.", setup.model_dir)
    _restore_or_warm_start(setup, checkpoint_path, spec)
    scaffold = spec.scaffold
    if scaffold.local_init_op is not None:
      # As the Estimator: the metrics' local variables get initialized too.
      scaffold = _v1.train.Scaffold(
          local_init_op=tf.group(scaffold.local_init_op,
                                 _v1.train.Scaffold.default_local_init_op()),
          copy_from_scaffold=scaffold)
    final_hook = FinalOpsHook(final)
    progress = EvalProgress(steps)
    # The Estimator's order: input hooks, the caller's, the steps hook,
    # the model_fn's evaluation hooks.
    all_hooks = built.input_hooks + list(hooks)
    all_hooks += [StopAfterNRunsHook(steps, progress)]
    all_hooks += list(spec.evaluation_hooks) + [final_hook]
    progress.start()
    creator = _v1.train.ChiefSessionCreator(
        scaffold=scaffold,
        master=config.evaluation_master,
        config=config.session_config,
        checkpoint_filename_with_path=checkpoint_path)
    with _v1.train.MonitoredSession(session_creator=creator,
                                    hooks=all_hooks) as session:
      while not session.should_stop():
        session.run(update_op)
  progress.finish()
  return dict(final_hook.final_ops_values)


def _select_predictions(spec: EstimatorSpec,
                        predict_keys: Optional[Sequence[str]]):
  """The predictions named in predict_keys, as the Estimator chose them.

  Keys the model does not predict are left out (with a warning), as the
  Estimator did; none of them there is an error.
  """
  predictions = spec.predictions
  if not predict_keys:
    return predictions
  if not isinstance(predictions, dict):
    raise ValueError(
        "predict_keys argument is not valid in case of non-dict predictions. "
        "Fix: return a dict of predictions from model_fn, or drop "
        "predict_keys.")
  chosen = {key: value for key, value in predictions.items()
            if key in predict_keys}
  if not chosen:
    # Worded as the Estimator's: the dict's keys view, the argument as given.
    raise ValueError(
        f"Expected to run at least one output from {predictions.keys()}, "
        f"provided {predict_keys}. Fix: name keys of the predictions "
        "dict model_fn returns.")
  # (A string selects, as the Estimator's `in` did, the keys it contains.)
  missing = [] if isinstance(predict_keys, str) else [
      key for key in predict_keys if key not in predictions]
  if missing:
    logging.warning("predict_keys %s are not among the predictions %s; "
                    "they are left out.", missing, sorted(predictions))
  return chosen


def _single_examples(batch: Any) -> Iterator[Any]:
  if not isinstance(batch, dict):
    yield from batch
    return
  sizes = {key: value.shape[0] if np.ndim(value) else None
           for key, value in batch.items()}
  scalars = [key for key, size in sizes.items() if size is None]
  if scalars:
    # The Estimator read the scalar's shape[0] (its IndexError, first).
    raise IndexError(
        f"tuple index out of range: prediction {scalars[0]!r} is a scalar, "
        "with no batch dimension to split into examples. Fix: give every "
        "prediction the batch's leading dimension (e.g. tf.fill([batch], "
        "value)), or call predict(..., yield_single_examples=False).")
  first = next(iter(sizes.values()), None)
  other = [key for key, size in sizes.items() if size != first]
  if other:
    raise ValueError(
        f"Batch length of predictions should be same. {other[0]} has "
        f"different batch length than others. Batch lengths: {sizes}. Fix: "
        "give every prediction the same leading batch dimension, or call "
        "predict(..., yield_single_examples=False).")
  # Example i gets value[i] of every key (numpy iteration gives the same
  # objects as indexing, at a third of the cost for one key).
  keys = list(batch)
  if len(keys) == 1:
    for value in batch[keys[0]]:
      yield {keys[0]: value}
    return
  for row in zip(*batch.values()):
    yield dict(zip(keys, row))


def predict(*, setup: ModelSetup, input_fn, hooks: Sequence[SessionRunHook],
            predict_keys: Optional[Sequence[str]],
            checkpoint_path: Optional[str],
            yield_single_examples: bool) -> Iterator[Any]:
  """Yields predictions of a checkpoint, per example or per batch."""
  built = _ModeGraph(setup, input_fn, ModeKeys.PREDICT)
  spec, config = built.spec, setup.config
  with built.graph.as_default():
    predictions = _select_predictions(spec, predict_keys)
    # Without a checkpoint: initialized or warm-started, as the Estimator.
    _restore_or_warm_start(setup, checkpoint_path, spec)
    creator = _v1.train.ChiefSessionCreator(
        scaffold=spec.scaffold,
        master=config.master,
        config=config.session_config,
        checkpoint_filename_with_path=checkpoint_path)
    all_hooks = built.input_hooks + list(hooks) + list(spec.prediction_hooks)
    with _v1.train.MonitoredSession(session_creator=creator,
                                    hooks=all_hooks) as session:
      while not session.should_stop():
        batch = session.run(predictions)
        if yield_single_examples:
          yield from _single_examples(batch)
        else:
          yield batch


def eval_dir(model_dir: str, name: Optional[str]) -> str:
  """Where evaluation summaries go: model_dir/eval or model_dir/eval_<name>."""
  return os.path.join(model_dir, "eval" if not name else "eval_" + name)
