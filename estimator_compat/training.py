"""TrainSpec, EvalSpec and train_and_evaluate (local mode)."""

import collections
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from estimator_compat.checkpoints.checkpoint_reading import global_step_of
from estimator_compat.checkpoints import checkpoint_files
from estimator_compat.distribute import cluster_tasks
from estimator_compat.distribute import strategies
from estimator_compat.engines import graph as graph_engine
from estimator_compat.engines import graph_between
from estimator_compat.front import tf_logging as logging
from estimator_compat.front import configuration
from estimator_compat.estimator import Estimator
from estimator_compat.export.exporter import Exporter
from estimator_compat.hooks import CheckpointSaverListener, SessionRunHook


# The end of the chief's eval events file name in a cluster (see
# engines.graph.own_eval_events_file).
CHIEF_EVAL_EVENTS_SUFFIX = ".chief"


def _check_input_fn(input_fn: Any) -> None:
  if not callable(input_fn):
    raise TypeError(
        f"`input_fn` must be callable, given: {input_fn!r}. Fix: pass the "
        "function itself (input_fn=my_input_fn), not the result of calling "
        "it.")


def _check_hooks(hooks: Optional[Sequence[Any]]) -> Tuple[Any, ...]:
  hooks = tuple(hooks or ())
  for hook in hooks:
    if not isinstance(hook, SessionRunHook):
      raise TypeError(
          f"All hooks must be `SessionRunHook` instances, given: {hook!r}. "
          "Fix: subclass tf.estimator.SessionRunHook "
          "(tf.compat.v1.train.SessionRunHook).")
  return hooks


def _check_saving_listeners(listeners: Optional[Sequence[Any]]
                            ) -> Tuple[Any, ...]:
  listeners = tuple(listeners or ())
  for listener in listeners:
    if not isinstance(listener, CheckpointSaverListener):
      raise TypeError(
          "All saving_listeners must be `CheckpointSaverListener` instances, "
          f"given: {listener!r}. Fix: subclass "
          "tf.estimator.CheckpointSaverListener "
          "(tf.compat.v1.train.CheckpointSaverListener).")
  return listeners


def _check_exporters(exporters: Any) -> Tuple[Exporter, ...]:
  """One Exporter, an iterable of them, or None, as a tuple.

  Raises:
    TypeError: something that is not an Exporter, or not iterable.
    ValueError: an exporter without a string name, or names that repeat.
  """
  if not exporters:
    return ()
  if isinstance(exporters, Exporter):
    exporters = [exporters]
  try:
    exporters = list(exporters)
  except TypeError:
    exporters = [exporters]  # Not iterable: reported as not an Exporter.
  for exporter in exporters:
    if not isinstance(exporter, Exporter):
      raise TypeError(
          "`exporters` must be an Exporter, an iterable of Exporter, or "
          f"`None`, found {exporter!r}. Fix: pass tf.estimator.Exporter "
          "instances (e.g. tf.estimator.LatestExporter(...)).")
  names = [exporter.name for exporter in exporters]
  seen = set()
  for name in names:
    if not name:
      raise ValueError(
          "An Exporter cannot have a name that is `None` or empty. All "
          f"exporter names: {names}. Fix: give each exporter a name; it is "
          "the directory under model_dir/export/.")
    if not isinstance(name, str):
      raise ValueError(
          f"An Exporter must have a string name. Given: {type(name)}. Fix: "
          "name it with a string (the directory under model_dir/export/).")
    if name in seen:
      raise ValueError(
          "`exporters` must have unique names. Such a name cannot be `None`. "
          f"All exporter names: {names}. Fix: give each exporter its own "
          "name, so that their exports do not share a directory.")
    seen.add(name)
  return tuple(exporters)


class TrainSpec(
    collections.namedtuple(
        "TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
  """What `train_and_evaluate` trains: input_fn, max_steps and hooks."""

  def __new__(cls,
              input_fn: Callable[..., Any],
              max_steps: Optional[int] = None,
              hooks: Optional[Sequence[SessionRunHook]] = None,
              saving_listeners: Optional[Sequence[Any]] = None):
    _check_input_fn(input_fn)
    if max_steps is not None and max_steps <= 0:
      raise ValueError(
          f"Must specify max_steps > 0, given: {max_steps}. Fix: pass a "
          "positive max_steps, or None to train until input_fn ends.")
    return super().__new__(cls, input_fn, max_steps, _check_hooks(hooks),
                           _check_saving_listeners(saving_listeners))


class EvalSpec(
    collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"
    ])):
  """What and how often `train_and_evaluate` evaluates."""

  def __new__(cls,
              input_fn: Callable[..., Any],
              steps: Optional[int] = 100,
              name: Optional[str] = None,
              hooks: Optional[Sequence[SessionRunHook]] = None,
              exporters: Any = None,
              start_delay_secs: int = 120,
              throttle_secs: int = 600):
    _check_input_fn(input_fn)
    if steps is not None and steps <= 0:
      raise ValueError(
          f"Must specify steps > 0, given: {steps}. Fix: pass a positive "
          "steps, or None to evaluate until input_fn ends.")
    if name is not None and not isinstance(name, str):
      raise TypeError(
          f"`name` must be string, given: {name!r}. Fix: pass a string (the "
          "evaluation's directory is model_dir/eval_<name>).")
    hooks = _check_hooks(hooks)
    exporters = _check_exporters(exporters)
    if start_delay_secs < 0:
      raise ValueError(
          f"Must specify start_delay_secs >= 0, given: {start_delay_secs}. "
          "Fix: pass 0 or more seconds.")
    if throttle_secs < 0:
      raise ValueError(
          f"Must specify throttle_secs >= 0, given: {throttle_secs}. Fix: "
          "pass 0 or more seconds.")
    return super().__new__(cls, input_fn, steps, name, hooks, exporters,
                           start_delay_secs, throttle_secs)


class _Evaluator:
  """Evaluates, runs exporters, and remembers the last result."""

  def __init__(self, estimator: Estimator, eval_spec: EvalSpec,
               max_steps: Optional[int]):
    self._estimator = estimator
    self._spec = eval_spec
    self._max_steps = max_steps
    self.last_result: Optional[Dict[str, Any]] = None
    self.last_step: Optional[int] = None
    self.export_results: List[Any] = []

  def evaluate_and_export(self) -> None:
    checkpoint = self._estimator.latest_checkpoint()
    if not checkpoint:
      logging.warning("No checkpoint to evaluate yet; skipping evaluation.")
      return
    checkpoint_files.retry_if_rotated(
        self._evaluate_and_export, checkpoint, self._estimator.model_dir)

  def _evaluate_and_export(self, checkpoint: str) -> None:
    result = self._estimator.evaluate(
        self._spec.input_fn, steps=self._spec.steps, hooks=self._spec.hooks,
        checkpoint_path=checkpoint, name=self._spec.name)
    self.last_result, self.last_step = result, int(result["global_step"])
    # As the Estimator: the export is final only when the evaluated step has
    # reached max_steps, never without max_steps or when training ended
    # earlier (at the end of its input).
    is_final = bool(self._max_steps) and self.last_step >= self._max_steps
    self.export_results = []
    for exporter in self._spec.exporters:
      path = os.path.join(self._estimator.model_dir, "export", exporter.name)
      self.export_results.append(
          exporter.export(self._estimator, path, checkpoint, result, is_final))


class _EvaluateAfterSave(CheckpointSaverListener):
  """Evaluates after a checkpoint save, at most every `throttle_secs`."""

  def __init__(self, evaluator: _Evaluator, throttle_secs: int):
    self._evaluator = evaluator
    self._throttle_secs = throttle_secs
    self._first_save = True
    self._last_time = time.time()

  def after_save(self, session, global_step_value):
    del session
    if self._first_save:  # The save at the start holds an untrained model.
      self._first_save = False
      return
    if time.time() - self._last_time < self._throttle_secs:
      return
    self._last_time = time.time()
    self._evaluator.evaluate_and_export()


def train_and_evaluate(estimator: Estimator, train_spec: TrainSpec,
                       eval_spec: EvalSpec) -> Tuple[Optional[Dict[str, Any]],
                                                     List[Any]]:
  """Trains, evaluating after checkpoints (throttled) and at the end.

  Without a TF_CONFIG cluster one process trains and evaluates. In a
  cluster each task plays its TF_CONFIG role: the chief trains (under the
  strategy chosen as in `strategies`) and evaluates once at the end;
  multi-worker `worker` tasks train with it; `ps` and `worker` tasks of
  parameter-server training serve; the `evaluator` evaluates each new
  checkpoint (after `start_delay_secs`, at most every `throttle_secs`) into
  `eval/` and runs the exporters, until the final step or the chief's end.

  Returns:
    (metrics of the last evaluation, results of its exporters).

  Raises:
    TypeError: an argument of the wrong type.
    ValueError: a cluster without a strategy that can use it, or an
      evaluator task whose index is not 0.
  """
  # The Estimator's checks, in its order: the eval_spec first.
  if not isinstance(eval_spec, EvalSpec):
    raise TypeError(
        "`eval_spec` must have type `tf.estimator.EvalSpec`. Got: "
        f"{type(eval_spec)}. Fix: pass tf.estimator.EvalSpec(input_fn=...).")
  if not isinstance(estimator, Estimator):
    raise TypeError(
        "`estimator` must have type `tf.estimator.Estimator`. Got: "
        f"{type(estimator)}. Fix: pass the tf.estimator.Estimator to train.")
  if not isinstance(train_spec, TrainSpec):
    raise TypeError(
        "`train_spec` must have type `tf.estimator.TrainSpec`. Got: "
        f"{type(train_spec)}. Fix: pass tf.estimator.TrainSpec(input_fn=...).")
  config = estimator.config
  if config.task_type == "evaluator" and config.task_id > 0:
    raise ValueError(
        "For distributed training, there can only be one `evaluator` task "
        f"(with task id 0).  Given task id {config.task_id}. Fix: give the "
        "evaluator index 0 in TF_CONFIG; run other evaluations with "
        "Estimator.evaluate.")
  if config.task_type == "evaluator":
    return _run_evaluator_task(estimator, eval_spec, train_spec.max_steps)
  if config.is_distributed:
    return _train_in_cluster(estimator, train_spec, eval_spec, config)
  evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
  listener = _EvaluateAfterSave(evaluator, eval_spec.throttle_secs)
  estimator.train(train_spec.input_fn, hooks=train_spec.hooks,
                  max_steps=train_spec.max_steps,
                  saving_listeners=list(train_spec.saving_listeners) +
                  [listener])
  final_step = global_step_of(estimator.latest_checkpoint())
  if evaluator.last_step is None or evaluator.last_step != final_step:
    evaluator.evaluate_and_export()
  return evaluator.last_result, evaluator.export_results


def _train_in_cluster(estimator: Estimator, train_spec: TrainSpec,
                      eval_spec: EvalSpec, config):
  """The chief or a worker of a TF_CONFIG cluster (see train_and_evaluate)."""
  choices = configuration.resolve(config)
  mode = strategies.training_mode(config, choices.strategy)
  if mode not in ("parameter_server", "multi_worker_mirrored"):
    raise ValueError(
        f"TF_CONFIG describes a cluster (this task: {config.task_type} "
        f"{config.task_id}) but training is not distributed across it "
        f"(strategy: {mode}). Fix: add ps tasks for parameter-server "
        "training, pass --strategy=multi_worker_mirrored or "
        "parameter_server (or RunConfig(train_distribute=...)), or unset "
        "TF_CONFIG to train in one process.")
  if strategies.between_graph(config, choices) and config.task_type in (
      "chief", "master", "worker"):
    # The Estimator's executor: this task's server first, then the delay.
    graph_between.start_server(config)
    graph_between.delay_worker(config)
  estimator.train(train_spec.input_fn, hooks=train_spec.hooks,
                  max_steps=train_spec.max_steps,
                  saving_listeners=train_spec.saving_listeners)
  if not config.is_chief:
    return None, []
  evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
  # Beside an evaluator task that may evaluate this very checkpoint now.
  with graph_engine.own_eval_events_file(CHIEF_EVAL_EVENTS_SUFFIX):
    evaluator.evaluate_and_export()
  cluster_tasks.mark_done(estimator.model_dir)
  return evaluator.last_result, evaluator.export_results


def _run_evaluator_task(estimator: Estimator, eval_spec: EvalSpec,
                        max_steps: Optional[int]):
  """Evaluates each new checkpoint until the final step or the chief's end."""
  started = time.time()
  time.sleep(eval_spec.start_delay_secs)
  evaluator = _Evaluator(estimator, eval_spec, max_steps)
  evaluated = None
  while True:
    chief_done = cluster_tasks.done_since(estimator.model_dir, started)
    latest = estimator.latest_checkpoint()
    if latest and latest != evaluated:
      step = global_step_of(latest)
      last = chief_done or (max_steps is not None and step >= max_steps)
      begun = time.time()
      evaluator.evaluate_and_export()
      evaluated = latest
      if last:
        break
      time.sleep(max(0.0, eval_spec.throttle_secs - (time.time() - begun)))
    elif chief_done:
      break
    else:
      time.sleep(1.0)
  return evaluator.last_result, evaluator.export_results
