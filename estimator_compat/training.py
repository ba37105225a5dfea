"""TrainSpec, EvalSpec and train_and_evaluate (local mode)."""

import abc
import collections
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from estimator_compat.checkpoint_reading import global_step_of
from estimator_compat import checkpoint_files
from estimator_compat.distribute import cluster_tasks
from estimator_compat.distribute import strategies
from estimator_compat import tf_logging as logging
from estimator_compat.estimator import Estimator
from estimator_compat.hooks import CheckpointSaverListener, SessionRunHook


class Exporter(abc.ABC):
  """Base class of exporters run after evaluations (`EvalSpec.exporters`)."""

  @property
  @abc.abstractmethod
  def name(self) -> str:
    """Directory name under model_dir/export/."""

  @abc.abstractmethod
  def export(self, estimator: Estimator, export_path: str,
             checkpoint_path: str, eval_result: Dict[str, Any],
             is_the_final_export: bool) -> Any:
    """Exports the model; returns what train_and_evaluate reports."""


def _hooks(hooks: Optional[Sequence[Any]], where: str) -> Tuple[Any, ...]:
  hooks = tuple(hooks or ())
  for hook in hooks:
    if not isinstance(hook, SessionRunHook):
      raise TypeError(f"{where}.hooks must hold SessionRunHook instances, got "
                      f"{type(hook).__name__}.")
  return hooks


class TrainSpec(
    collections.namedtuple(
        "TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
  """What `train_and_evaluate` trains: input_fn, max_steps and hooks."""

  def __new__(cls,
              input_fn: Callable[..., Any],
              max_steps: Optional[int] = None,
              hooks: Optional[Sequence[SessionRunHook]] = None,
              saving_listeners: Optional[Sequence[Any]] = None):
    if not callable(input_fn):
      raise TypeError(f"TrainSpec: input_fn must be callable, got "
                      f"{type(input_fn).__name__}.")
    if max_steps is not None and max_steps <= 0:
      raise ValueError(f"TrainSpec: max_steps must be > 0, given: {max_steps}.")
    return super().__new__(cls, input_fn, max_steps, _hooks(hooks, "TrainSpec"),
                           tuple(saving_listeners or ()))


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
    if not callable(input_fn):
      raise TypeError(f"EvalSpec: input_fn must be callable, got "
                      f"{type(input_fn).__name__}.")
    if steps is not None and steps <= 0:
      raise ValueError(f"EvalSpec: steps must be > 0 or None, given: {steps}.")
    if name is not None and not isinstance(name, str):
      raise TypeError(f"EvalSpec: name must be a string, got {name!r}.")
    if start_delay_secs < 0 or throttle_secs < 0:
      raise ValueError("EvalSpec: start_delay_secs and throttle_secs must be "
                       ">= 0.")
    if exporters is None:
      exporters = ()
    elif isinstance(exporters, Exporter):
      exporters = (exporters,)
    exporters = tuple(exporters)
    names = [e.name for e in exporters]
    if len(set(names)) != len(names):
      raise ValueError(f"EvalSpec: exporter names must be unique: {names}.")
    return super().__new__(cls, input_fn, steps, name,
                           _hooks(hooks, "EvalSpec"), exporters,
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

  def evaluate_and_export(self, is_final: bool) -> None:
    checkpoint = self._estimator.latest_checkpoint()
    if not checkpoint:
      logging.warning("No checkpoint to evaluate yet; skipping evaluation.")
      return
    checkpoint_files.retry_if_rotated(
        lambda path: self._evaluate_and_export(path, is_final), checkpoint,
        self._estimator.model_dir)

  def _evaluate_and_export(self, checkpoint: str, is_final: bool) -> None:
    result = self._estimator.evaluate(
        self._spec.input_fn, steps=self._spec.steps, hooks=self._spec.hooks,
        checkpoint_path=checkpoint, name=self._spec.name)
    self.last_result, self.last_step = result, int(result["global_step"])
    # As the Estimator: the export is final once max_steps is reached (and,
    # without max_steps, for the evaluation after training ends).
    is_final = is_final or (self._max_steps is not None and
                            self.last_step >= self._max_steps)
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
    self._evaluator.evaluate_and_export(is_final=False)


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
    ValueError: a cluster without a strategy that can use it.
  """
  if not isinstance(estimator, Estimator):
    raise TypeError(f"train_and_evaluate needs an Estimator, got "
                    f"{type(estimator).__name__}.")
  if not isinstance(train_spec, TrainSpec):
    raise TypeError(f"train_spec must be a TrainSpec, got "
                    f"{type(train_spec).__name__}.")
  if not isinstance(eval_spec, EvalSpec):
    raise TypeError(f"eval_spec must be an EvalSpec, got "
                    f"{type(eval_spec).__name__}.")
  config = estimator.config
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
    evaluator.evaluate_and_export(is_final=True)
  return evaluator.last_result, evaluator.export_results


def _train_in_cluster(estimator: Estimator, train_spec: TrainSpec,
                      eval_spec: EvalSpec, config):
  """The chief or a worker of a TF_CONFIG cluster (see train_and_evaluate)."""
  mode = strategies.training_mode(config)
  if mode not in ("parameter_server", "multi_worker_mirrored"):
    raise ValueError(
        f"TF_CONFIG describes a cluster (this task: {config.task_type} "
        f"{config.task_id}) but training is not distributed across it "
        f"(strategy: {mode}). Fix: add ps tasks for parameter-server "
        "training, pass --strategy=multi_worker_mirrored or "
        "parameter_server (or RunConfig(train_distribute=...)), or unset "
        "TF_CONFIG to train in one process.")
  estimator.train(train_spec.input_fn, hooks=train_spec.hooks,
                  max_steps=train_spec.max_steps,
                  saving_listeners=train_spec.saving_listeners)
  if not config.is_chief:
    return None, []
  evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
  evaluator.evaluate_and_export(is_final=True)
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
      final = chief_done or (max_steps is not None and step >= max_steps)
      begun = time.time()
      evaluator.evaluate_and_export(is_final=final)
      evaluated = latest
      if final:
        break
      time.sleep(max(0.0, eval_spec.throttle_secs - (time.time() - begun)))
    elif chief_done:
      break
    else:
      time.sleep(1.0)
  return evaluator.last_result, evaluator.export_results
