"""Estimator: the public front, a thin outer loop over an engine.

The front validates arguments, decides what to do (skip training when
max_steps is reached, which checkpoint to use, where summaries go) and hands
one call of a mode to the engine.
"""

import copy
import dataclasses
import numbers
import os
import tempfile
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import numpy as np
import tensorflow as tf

from estimator_compat.checkpoints import checkpoint_files
from estimator_compat.checkpoints import checkpoint_reading
from estimator_compat.front import configuration
from estimator_compat.front import front_checks
from estimator_compat.distribute import cluster_tasks
from estimator_compat.front import model_dir_lock
from estimator_compat.front import preemption
from estimator_compat.checkpoints import rotation_record
from estimator_compat.distribute import strategies
from estimator_compat.front import tf_logging as logging
from estimator_compat import warm_starting
from estimator_compat.front import writable_dirs
from estimator_compat.engines import dispatch
from estimator_compat.engines import graph as graph_engine
from estimator_compat.engines.base import Engine
from estimator_compat.export import saved_model_writer
from estimator_compat.hooks import SessionRunHook
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import (ModelSetup, bound_model_fn,
                                            check_model_fn)
from estimator_compat.run_config import RunConfig, default_session_config


def maybe_overwrite_model_dir_and_session_config(
    config: Optional[RunConfig], model_dir: Optional[str]) -> RunConfig:
  """The RunConfig with model_dir and session_config filled in.

  tensorflow-estimator 2.15 exposed this in its estimator module; packages
  that build their own canned estimators (tensorflow-lattice) call it.

  Args:
    config: a RunConfig, or None for the defaults.
    model_dir: the constructor's model_dir, or None: then the config's, or a
      new temporary folder.

  Returns:
    The config, its session_config defaulted and its model_dir set.

  Raises:
    ValueError: config is not a RunConfig, or names another model_dir.
  """
  if config is None:
    logging.info("Using default config.")
  config = front_checks.check_config(config)
  if config.session_config is None:
    config = config.replace(session_config=default_session_config())
  if model_dir is not None:
    model_dir = os.fspath(model_dir)
    front_checks.check_model_dir(model_dir, config.model_dir)
  if model_dir:
    return config.replace(model_dir=model_dir)
  if not config.model_dir:
    model_dir = tempfile.mkdtemp()
    logging.warning("Using temporary folder as model directory: %s",
                    model_dir)
    return config.replace(model_dir=model_dir)
  return config


def check_train_steps(steps: Optional[float],
                      max_steps: Optional[float]) -> None:
  """train()'s checks of steps and max_steps, worded as the Estimator's.

  Raises:
    ValueError: both set, or one not > 0.
  """
  if steps is not None and max_steps is not None:
    raise ValueError(
        "Can not provide both steps and max_steps. Fix: steps counts from "
        "the restored step, max_steps is absolute; pick one.")
  _check_positive("steps", steps)
  _check_positive("max_steps", max_steps)


def _check_positive(name: str, value: Optional[float]) -> None:
  """Refuses what the Estimator refused: a `steps`/`max_steps` not > 0.

  Any number above 0 is accepted, as by the Estimator; a fractional one
  (`examples * epochs / batch_size`) stops at the next whole step.
  """
  if value is not None and (not isinstance(value, numbers.Real) or
                            value <= 0):
    raise ValueError(
        f"Must specify {name} > 0, given: {value}. Fix: pass a number of "
        "steps above 0, or None.")


def _input_fn_name(input_fn: Any) -> str:
  """`module.qualname` of an input_fn (of the function a partial wraps)."""
  target = getattr(input_fn, "func", input_fn)
  name = getattr(target, "__qualname__", None) or type(target).__name__
  module = getattr(target, "__module__", None)
  return f"{module}.{name}" if module else name


def _warn_if_no_step(input_fn: Any, before: Optional[str],
                     model_dir: str) -> None:
  """Warns when train() ran no step: its input yielded nothing.

  The Estimator trained 0 steps there without a word ("Loss for final step:
  None."); the count of steps stays, the warning is added. A run whose
  global step moved (steps ran whose loss was lost with a worker) is not
  warned about.
  """
  step = checkpoint_reading.global_step_of(before)
  after = checkpoint_files.checkpoint_to_restore(model_dir)
  if after is not None and checkpoint_reading.global_step_of(after) != step:
    return
  logging.warning(
      "Training ran 0 steps: the input_fn %s yielded no batch (an empty "
      "dataset or array, a filter or file pattern that matched nothing, or "
      "its epochs already used up), so global_step stays at %d. Fix: check "
      "the data that input_fn reads.", _input_fn_name(input_fn), step)


class Estimator:
  """Trains, evaluates and predicts with a legacy `model_fn`.

  Mirrors `tf.estimator.Estimator`: the same constructor, methods and
  model_dir layout, so legacy programs run unchanged.
  """

  def __init__(self,
               model_fn: Callable[..., Any],
               model_dir: Optional[str] = None,
               config: Optional[RunConfig] = None,
               params: Optional[Dict[str, Any]] = None,
               warm_start_from: Any = None):
    """Builds an Estimator.

    Args:
      model_fn: `model_fn(features, labels, mode, params, config)` returning
        an EstimatorSpec; it may take any subset that includes `features`.
      model_dir: where checkpoints and summaries go; a temporary folder when
        neither this nor `config.model_dir` is set.
      config: a RunConfig.
      params: hyperparameters passed to model_fn and input_fn.
      warm_start_from: checkpoint path or WarmStartSettings.

    Raises:
      TypeError / ValueError: a bad argument, with the fix.
    """
    front_checks.check_not_overridden(Estimator, self)
    config = maybe_overwrite_model_dir_and_session_config(config, model_dir)
    model_dir = config.model_dir
    check_model_fn(model_fn, params)
    params = copy.deepcopy(params or {})
    choices = configuration.resolve(config)
    strategies.check(config, choices)
    self._config = config
    self._model_dir = model_dir
    self._params = params
    self._setup = ModelSetup(
        model_fn=model_fn, model_dir=model_dir, config=config, params=params,
        choices=choices, warm_start=warm_starting.resolve(warm_start_from))

  model_dir = property(lambda self: self._model_dir)
  config = property(lambda self: copy.deepcopy(self._config))
  params = property(lambda self: copy.deepcopy(self._params))
  # The real Estimator's attribute, read by tf.estimator.add_metrics.
  _warm_start_settings = property(lambda self: self._setup.warm_start)

  @property
  def _model_fn(self) -> Callable[..., Any]:
    """The model_fn as given (the real Estimator's attribute)."""
    return self._setup.model_fn

  @_model_fn.setter
  def _model_fn(self, model_fn: Callable[..., Any]) -> None:
    """Replaces the model_fn of later calls, as assigning the real
    Estimator's attribute did (neural-structured-learning's
    add_adversarial_regularization wraps an estimator's model_fn so).

    Raises:
      ValueError: model_fn's arguments are not a model_fn's.
    """
    check_model_fn(model_fn, self._params or None)
    self._setup = dataclasses.replace(self._setup, model_fn=model_fn)

  @property
  def model_fn(self) -> Callable[..., Any]:
    """The model_fn bound to `params`: `model_fn(features, labels, mode,
    config)`, as the Estimator's property returned it."""
    return bound_model_fn(self._setup)

  def _engine(self) -> Engine:
    return dispatch  # Each call runs on the engine that can honour it.

  def _call_setup(self) -> ModelSetup:
    """The setup of one call: the engine and strategy flags resolved now,
    once (front/configuration.py), for everything the call does."""
    return dataclasses.replace(self._setup,
                               choices=configuration.resolve(self._config))

  def latest_checkpoint(self) -> Optional[str]:
    """Path of the newest checkpoint in model_dir, or None."""
    return checkpoint_reading.latest_checkpoint(self._model_dir)

  def get_variable_names(self) -> List[str]:
    """Names of the variables in the newest checkpoint."""
    return [name for name, _ in tf.train.list_variables(self._require_ckpt())]

  def get_variable_value(self, name: str) -> np.ndarray:
    """Value of one variable in the newest checkpoint."""
    return tf.train.load_variable(self._require_ckpt(), name)

  def eval_dir(self, name: Optional[str] = None) -> str:
    """Directory of evaluation summaries for `name`."""
    return graph_engine.eval_dir(self._model_dir, name)

  def _require_ckpt(self) -> str:
    path = checkpoint_files.checkpoint_to_restore(self._model_dir)
    if not path:
      raise front_checks.no_checkpoint_error(self._model_dir)
    return path

  def train(self,
            input_fn: Callable[..., Any],
            hooks: Optional[Sequence[SessionRunHook]] = None,
            steps: Optional[int] = None,
            max_steps: Optional[int] = None,
            saving_listeners: Optional[Sequence[Any]] = None) -> "Estimator":
    """Trains the model.

    Args:
      input_fn: returns a Dataset, (features, labels) or features.
      hooks: extra SessionRunHooks.
      steps: steps to train for, on top of the restored global_step.
      max_steps: train until global_step reaches this; nothing is done when
        the checkpoint is already there.
      saving_listeners: CheckpointSaverListeners, called around each save.

    Returns:
      self, so calls can be chained.

    Raises:
      ValueError: both steps and max_steps, or a non-positive one.
    """
    check_train_steps(steps, max_steps)
    hooks = front_checks.check_hooks(hooks)
    saving_listeners = front_checks.check_saving_listeners(saving_listeners)
    setup = self._call_setup()
    if self._serve_or_refuse_in_cluster(setup.choices):
      return self
    # Nothing to write (a read-only model_dir is fine then): no lock.
    if max_steps is not None and self._skip(max_steps,
                                            self._usable_newest()):
      return self
    # SIGTERM/SIGINT stop training with a save; they act once the lock is
    # released (preemption.py).
    with preemption.watch(self._config, setup.choices):
      self._train_locked(setup, input_fn, hooks, steps, max_steps,
                         saving_listeners)
    return self

  def _train_locked(self, setup, input_fn, hooks, steps, max_steps,
                    saving_listeners) -> None:
    """train() holding the model_dir lock (the chief's)."""
    # The lock first: a refused trainer must not touch the files (such as
    # the save in progress) of the one that holds it.
    with model_dir_lock.held(self._model_dir, self._config.is_chief):
      latest = checkpoint_files.checkpoint_to_restore(self._model_dir)
      if latest is None:
        checkpoint_files.refuse_unnamed_checkpoints(self._model_dir)
      if self._skip(max_steps, latest):
        return
      if self._config.is_chief:
        checkpoint_files.refuse_symlinked_files(self._model_dir)
        checkpoint_files.remove_unfinished_saves(self._model_dir)
        rotation_record.finish_cut_short(self._model_dir)
      loss = self._engine().train(
          setup=setup, input_fn=input_fn, hooks=hooks, steps=steps,
          max_steps=max_steps, saving_listeners=saving_listeners)
      if loss is None and not preemption.requested():
        _warn_if_no_step(input_fn, latest, self._model_dir)

  def _usable_newest(self) -> Optional[str]:
    """The newest checkpoint; None also when it cannot be used (train()
    refuses it, naming the fix, once it holds the lock)."""
    try:
      return checkpoint_files.checkpoint_to_restore(self._model_dir)
    except (ValueError, tf.errors.OpError):
      return None

  @staticmethod
  def _skip(max_steps: Optional[int], latest: Optional[str]) -> bool:
    """Whether `latest` is at max_steps already (logged)."""
    if max_steps is None or checkpoint_reading.global_step_of(
        latest) < max_steps:
      return False
    logging.info("Skipping training since max_steps has already saved.")
    return True

  def _serve_or_refuse_in_cluster(self,
                                  choices: configuration.Choices) -> bool:
    """Cluster roles: True if this task served instead of training.

    ps and worker tasks of parameter-server training serve until the chief
    is done; an evaluator does not train; a chief marks the run done when
    its process ends, so that serving tasks exit.

    Raises:
      ValueError: train() on an evaluator task, or with a strategy and a
        TF_CONFIG cluster that names no task.
    """
    config = self._config
    if getattr(config, "_task_missing", False):
      raise ValueError(
          "Only `STANDALONE_CLIENT` mode is supported when you call "
          "`estimator.train`. Fix: TF_CONFIG names a cluster but no task: set "
          '"task": {"type": "chief", "index": 0} (or this process\'s task), '
          "or unset TF_CONFIG to train on this machine.")
    if not config.is_distributed and config.task_type != "evaluator":
      return False
    if config.task_type == "evaluator":
      raise ValueError(
          "train() was called on the evaluator task (TF_CONFIG). Fix: call "
          "train_and_evaluate(), which evaluates each new checkpoint there.")
    if cluster_tasks.serves_only(config, choices):
      cluster_tasks.serve_until_done(config, choices, self._model_dir)
      return True
    if config.is_chief:
      cluster_tasks.mark_done_at_exit(self._model_dir)
    elif config.task_type == "worker" and strategies.between_graph(config,
                                                                  choices):
      cluster_tasks.mark_done_at_exit(self._model_dir, worker=config.task_id)
    return False

  def evaluate(self,
               input_fn: Callable[..., Any],
               steps: Optional[int] = None,
               hooks: Optional[Sequence[SessionRunHook]] = None,
               checkpoint_path: Optional[str] = None,
               name: Optional[str] = None) -> Dict[str, Any]:
    """Evaluates a checkpoint (the newest by default).

    Returns:
      The eval_metric_ops values, the mean `loss` and `global_step`; they are
      also written as summaries to `eval_dir(name)`.
    """
    _check_positive("steps", steps)
    hooks = front_checks.check_hooks(hooks)
    writable_dirs.check_writable(
        self.eval_dir(name), "evaluate()'s summaries",
        "make model_dir writable, or evaluate from an Estimator whose "
        "model_dir is writable, passing checkpoint_path= the checkpoint to "
        "evaluate.")
    picked = not checkpoint_path  # Only a picked one may be replaced.
    checkpoint_path = checkpoint_files.usable_checkpoint(checkpoint_path,
                                                        self._model_dir)
    setup = self._call_setup()

    def run(path):
      return path, self._engine().evaluate(
          setup=setup, input_fn=input_fn, hooks=hooks, steps=steps,
          checkpoint_path=path)

    evaluated, results = checkpoint_files.retry_if_rotated(
        run, checkpoint_path, self._model_dir, retries=3 if picked else 0)
    graph_engine.write_eval_summary(self.eval_dir(name), results,
                                    int(results["global_step"]), evaluated)
    logging.info("Saving dict for global step %d: %s",
                 int(results["global_step"]),
                 ", ".join("%s = %s" % (k, v)
                           for k, v in sorted(results.items())
                           if not isinstance(v, bytes)))
    return results

  def predict(self,
              input_fn: Callable[..., Any],
              predict_keys: Optional[Sequence[str]] = None,
              hooks: Optional[Sequence[SessionRunHook]] = None,
              checkpoint_path: Optional[str] = None,
              yield_single_examples: bool = True) -> Iterator[Any]:
    """Yields predictions, one example (or one batch) at a time.

    Without a checkpoint in model_dir the variables are initialized (or
    warm-started), as the Estimator did. Errors are raised on the first
    `next()`.

    Raises:
      ValueError: `checkpoint_path` was given and holds no checkpoint.
    """
    hooks = front_checks.check_hooks(hooks)
    given = checkpoint_path
    checkpoint_path = checkpoint_files.usable_checkpoint(checkpoint_path,
                                                        self._model_dir)
    if not checkpoint_path:
      if given:
        raise front_checks.no_checkpoint_error(os.fspath(given))
      logging.info(
          "Could not find trained model in model_dir: %s, running "
          "initialization to predict.", self._model_dir)
    yield from self._engine().predict(
        setup=self._call_setup(), input_fn=input_fn, hooks=hooks,
        predict_keys=predict_keys, checkpoint_path=checkpoint_path,
        yield_single_examples=yield_single_examples)

  def export_saved_model(self,
                         export_dir_base: str,
                         serving_input_receiver_fn: Callable[[], Any],
                         assets_extra: Optional[Dict[str, str]] = None,
                         as_text: bool = False,
                         checkpoint_path: Optional[str] = None,
                         experimental_mode: str = ModeKeys.PREDICT) -> bytes:
    """Exports the model as a SavedModel for serving.

    Args:
      export_dir_base: the export goes to a new timestamped directory here.
      serving_input_receiver_fn: returns a ServingInputReceiver (graph code:
        placeholders, tf.io.parse_example).
      assets_extra: {destination: source path} copied to assets.extra/.
      as_text: write saved_model.pbtxt instead of .pb.
      checkpoint_path: the checkpoint to export (default: the newest).
      experimental_mode: the mode whose graph is exported.

    Returns:
      The export directory, as bytes (as the Estimator returned it).

    Raises:
      ValueError: no checkpoint to export.
    """
    return self.experimental_export_all_saved_models(
        export_dir_base, {experimental_mode: serving_input_receiver_fn},
        assets_extra=assets_extra, as_text=as_text,
        checkpoint_path=checkpoint_path)

  def experimental_export_all_saved_models(
      self,
      export_dir_base: str,
      input_receiver_fn_map: Dict[str, Callable[[], Any]],
      assets_extra: Optional[Dict[str, str]] = None,
      as_text: bool = False,
      checkpoint_path: Optional[str] = None) -> bytes:
    """Exports one SavedModel with a MetaGraph per mode in the map."""
    return saved_model_writer.export_all_saved_models(
        self._setup, export_dir_base, input_receiver_fn_map, assets_extra,
        as_text, checkpoint_path)
