"""Early stopping: `tf.estimator.experimental.stop_if_*` and friends.

Each `stop_if_*` function reads the evaluation summaries in an eval
directory (by default `estimator.eval_dir()`, where `evaluate()` and
`train_and_evaluate()` write them) and builds, with
`make_early_stopping_hook`, a hook that stops training once the metric
history says so. The chief decides and tells the other workers through the
`signal_early_stopping/STOP` variable (see early_stopping_hooks).

Caveat, as in the Estimator: in a cluster the separate evaluator task is not
stopped; it keeps waiting for new checkpoints until it is ended otherwise.
"""

import collections
import operator
import os
from typing import Any, Callable, Dict, Iterator, Optional

import tensorflow as tf

from estimator_compat.front import configuration
from estimator_compat.front import tf_logging as logging
from estimator_compat.distribute import strategies
from estimator_compat.in_training.early_stopping_hooks import (
    CheckForStoppingHook, StopOnPredicateHook, SummedVoteStoppingHook)
from estimator_compat.estimator import Estimator

_v1 = tf.compat.v1
_EVENTS_GLOB = "events.out.tfevents.*"


def _events(eval_dir: str) -> Iterator[Any]:
  """The Event protos of every events file in `eval_dir`.

  A file that turns out corrupt is read up to the damage, with a warning.
  """
  if not _v1.gfile.Exists(eval_dir):
    return
  for path in _v1.gfile.Glob(os.path.join(eval_dir, _EVENTS_GLOB)):
    try:
      yield from _v1.train.summary_iterator(path)
    except tf.errors.DataLossError as error:
      logging.warning(
          "Skipping rest of the file due to encountering data corruption "
          "error; file path: %s; original error raised by "
          "`tf.train.summary_iterator`: %s", path, error)


def read_eval_metrics(eval_dir: str) -> Dict[int, Dict[str, float]]:
  """The scalar evaluation results in `eval_dir`, by global step.

  Returns:
    An OrderedDict {global_step: {metric name: value}}, by increasing step;
    empty when the directory is missing or has no events.
  """
  by_step = collections.defaultdict(dict)
  for event in _events(eval_dir):
    if not event.HasField("summary"):
      continue
    scalars = {value.tag: value.simple_value for value in event.summary.value
               if value.HasField("simple_value")}
    if scalars:
      by_step[event.step].update(scalars)
  return collections.OrderedDict(sorted(by_step.items()))


def _is_mirrored_kind(config: Any) -> bool:
  """Whether the Estimator took its strategy early-stopping path.

  TF 2.15's test meant to pick MultiWorkerMirroredStrategy only, but was
  true for every `train_distribute`; programs were written against that.
  """
  return config.train_distribute is not None


def make_early_stopping_hook(estimator: Estimator,
                             should_stop_fn: Callable[[], bool],
                             run_every_secs: Optional[float] = 60,
                             run_every_steps: Optional[int] = None
                            ) -> _v1.train.SessionRunHook:
  """A hook that stops training once `should_stop_fn()` returns True.

  Pass it in `TrainSpec(hooks=...)` or `train(hooks=...)`. The chief calls
  `should_stop_fn` every `run_every_secs` seconds or `run_every_steps`
  steps; other workers stop when the chief has decided.

  Args:
    estimator: the `tf.estimator.Estimator` being trained.
    should_stop_fn: a callable of no arguments returning a bool.
    run_every_secs: how often to call it, in seconds (default 60).
    run_every_steps: or every this many steps; set only one of the two.

  Returns:
    The SessionRunHook for this task.

  Raises:
    TypeError: `estimator` is not an Estimator, or `should_stop_fn` is not
      callable.
    ValueError: both schedules are set, `run_every_secs` under a
      `train_distribute` strategy, or MultiWorkerMirroredStrategy across
      several workers (not supported yet).
  """
  if not isinstance(estimator, Estimator):
    raise TypeError("`estimator` must have type `tf.estimator.Estimator`. "
                    f"Got: {type(estimator)}")
  if run_every_secs is not None and run_every_steps is not None:
    raise ValueError(
        "Only one of `run_every_secs` and `run_every_steps` must be set. "
        "Fix: pass run_every_secs=None with run_every_steps.")
  config = estimator.config
  if (strategies.training_mode(
      config, configuration.resolve(config).strategy) ==
      "multi_worker_mirrored" and
      config.num_worker_replicas > 1):
    raise ValueError(
        "Early stopping under MultiWorkerMirroredStrategy across "
        f"{config.num_worker_replicas} workers is not supported yet: "
        "estimator_compat does not combine the workers' stop votes, so a "
        "worker would train on after the chief stopped. Fix: train with "
        "parameter servers (TF_CONFIG with ps tasks), where the chief's stop "
        "ends every worker, or on one worker.")
  if _is_mirrored_kind(config):
    if run_every_secs:
      raise ValueError(
          "run_every_secs should not be set when using "
          "MultiWorkerMirroredStrategy. (TF 2.15 applied this to every "
          "train_distribute strategy.) Fix: pass run_every_secs=None and "
          "run_every_steps=N.")
    return SummedVoteStoppingHook(should_stop_fn, run_every_steps)
  if config.is_chief:
    return StopOnPredicateHook(should_stop_fn, run_every_secs,
                               run_every_steps)
  return CheckForStoppingHook()


def _eval_dir(estimator: Any, eval_dir: Optional[str]) -> str:
  return estimator.eval_dir() if eval_dir is None else eval_dir


def _threshold_hook(estimator, metric_name, threshold, higher, eval_dir,
                    min_steps, run_every_secs, run_every_steps):
  """Stops once the metric passes `threshold` at a step >= min_steps."""
  eval_dir = _eval_dir(estimator, eval_dir)
  passes = operator.gt if higher else operator.lt
  words = "greater than" if higher else "less than"

  def crossed() -> bool:
    for step, metrics in read_eval_metrics(eval_dir).items():
      if step < min_steps:
        continue
      value = metrics[metric_name]
      if passes(value, threshold):
        logging.info(
            'At step %s, metric "%s" has value %s which is %s the '
            "configured threshold (%s) for early stopping.", step,
            metric_name, value, words, threshold)
        return True
    return False

  return make_early_stopping_hook(estimator, crossed, run_every_secs,
                                  run_every_steps)


def _no_improvement_hook(estimator, metric_name, max_steps, higher, eval_dir,
                         min_steps, run_every_secs, run_every_steps):
  """Stops once the best value is max_steps or more steps old."""
  eval_dir = _eval_dir(estimator, eval_dir)
  better = operator.gt if higher else operator.lt
  word = "increase" if higher else "decrease"

  def stalled() -> bool:
    best = best_step = None
    for step, metrics in read_eval_metrics(eval_dir).items():
      if step < min_steps:
        continue
      value = metrics[metric_name]
      if best is None or better(value, best):
        best, best_step = value, step
      if step - best_step >= max_steps:
        logging.info(
            'No %s in metric "%s" for %s steps, which is greater than or '
            "equal to max steps (%s) configured for early stopping.", word,
            metric_name, step - best_step, max_steps)
        return True
    return False

  return make_early_stopping_hook(estimator, stalled, run_every_secs,
                                  run_every_steps)


def stop_if_higher_hook(estimator: Estimator, metric_name: str,
                        threshold: float, eval_dir: Optional[str] = None,
                        min_steps: int = 0,
                        run_every_secs: Optional[float] = 60,
                        run_every_steps: Optional[int] = None
                       ) -> _v1.train.SessionRunHook:
  """Stops training once `metric_name` is above `threshold`.

  Args:
    estimator: the Estimator being trained.
    metric_name: an evaluation result ("loss", "accuracy", ...).
    threshold: stop when an evaluation's value is higher than this.
    eval_dir: the summaries to read (default `estimator.eval_dir()`).
    min_steps: ignore evaluations of global steps below this.
    run_every_secs: check this often, in seconds (default 60).
    run_every_steps: or every this many steps; set only one of the two.
  """
  return _threshold_hook(estimator, metric_name, threshold, True, eval_dir,
                         min_steps, run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator: Estimator, metric_name: str,
                       threshold: float, eval_dir: Optional[str] = None,
                       min_steps: int = 0,
                       run_every_secs: Optional[float] = 60,
                       run_every_steps: Optional[int] = None
                      ) -> _v1.train.SessionRunHook:
  """Stops training once `metric_name` is below `threshold`.

  Takes the arguments of `stop_if_higher_hook`.
  """
  return _threshold_hook(estimator, metric_name, threshold, False, eval_dir,
                         min_steps, run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator: Estimator, metric_name: str,
                             max_steps_without_increase: int,
                             eval_dir: Optional[str] = None,
                             min_steps: int = 0,
                             run_every_secs: Optional[float] = 60,
                             run_every_steps: Optional[int] = None
                            ) -> _v1.train.SessionRunHook:
  """Stops training once `metric_name` had no new maximum for that long.

  The evaluation that set the best value so far and the newest one are
  `max_steps_without_increase` or more global steps apart.

  Takes the arguments of `stop_if_higher_hook`, with
  `max_steps_without_increase` for `threshold`.
  """
  return _no_improvement_hook(estimator, metric_name,
                              max_steps_without_increase, True, eval_dir,
                              min_steps, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator: Estimator, metric_name: str,
                             max_steps_without_decrease: int,
                             eval_dir: Optional[str] = None,
                             min_steps: int = 0,
                             run_every_secs: Optional[float] = 60,
                             run_every_steps: Optional[int] = None
                            ) -> _v1.train.SessionRunHook:
  """Stops training once `metric_name` had no new minimum for that long.

  Takes the arguments of `stop_if_no_increase_hook`.
  """
  return _no_improvement_hook(estimator, metric_name,
                              max_steps_without_decrease, False, eval_dir,
                              min_steps, run_every_secs, run_every_steps)
