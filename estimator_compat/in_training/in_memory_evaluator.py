"""`tf.estimator.experimental.InMemoryEvaluatorHook`: evaluate while training.

The hook evaluates the model being trained, with its current variable
values, once the session exists (before the first step), every
`every_n_iter` training steps and at the end, writing each result to
`eval_dir(name)` at the global step it was taken at, as `evaluate()` does.

The Estimator fed the values into an evaluation graph of its own. Here the
values are written as a name-based checkpoint into a private temporary
directory and `estimator.evaluate(checkpoint_path=...)` evaluates it, so the
evaluation is exactly the one `evaluate()` makes, on either engine. It runs
in a thread of its own so that it never builds into the training graph.
"""

import concurrent.futures
import os
import shutil
import tempfile
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np
import tensorflow as tf

from estimator_compat.front import front_checks
from estimator_compat.front import configuration
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import (ModelSetup, call_input_fn,
                                            call_model_fn)

_v1 = tf.compat.v1


def _saved_name_and_slice(variable: Any):
  """(checkpoint key, slice spec) a TF1 Saver would save the variable under."""
  info = getattr(variable, "_save_slice_info", None)
  if info is not None:
    return info.full_name, info.spec
  return variable.name.split(":")[0], ""


def _write_checkpoint(prefix: str, variables: Dict[str, Any],
                      values: Dict[str, np.ndarray]) -> None:
  """Writes `values` as a name-based (Saver) checkpoint at `prefix`."""
  names, slices, tensors = [], [], []
  for key in sorted(variables):
    name, spec = _saved_name_and_slice(variables[key])
    names.append(name)
    slices.append(spec)
    tensors.append(tf.constant(values[key]))
  tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names,
                    shape_and_slices=slices, tensors=tensors)


def _in_fresh_thread(fn: Callable[[], Any]) -> Any:
  """`fn()` in a new thread: no default graph, the process's eager mode."""
  with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
    return pool.submit(fn).result()


class InMemoryEvaluatorHook(_v1.train.SessionRunHook):
  """Evaluates the model in training, without waiting for checkpoints.

  Only for single-machine training. Models with a custom Saver or
  Scaffold.init_fn in evaluation, or saveables other than variables, are
  refused, as by the Estimator.

  Args:
    estimator: the Estimator being trained.
    input_fn: the evaluation input_fn, as for `evaluate()`.
    steps: evaluate this many batches (default: until the input ends).
    hooks: SessionRunHooks for each evaluation.
    name: results go to `eval_<name>/` (default `eval/`).
    every_n_iter: evaluate every this many training steps of this hook.

  Raises:
    ValueError: a non-positive every_n_iter or steps, or a distributed
      RunConfig.
  """

  def __init__(self, estimator: Any, input_fn: Callable[..., Any],
               steps: Optional[int] = None,
               hooks: Optional[Sequence[Any]] = None,
               name: Optional[str] = None, every_n_iter: int = 100):
    if every_n_iter is None or every_n_iter <= 0:
      raise ValueError(f"invalid every_n_iter={every_n_iter}.")
    config = estimator.config
    if config.num_ps_replicas > 0 or config.num_worker_replicas > 1:
      raise ValueError(
          "InMemoryEvaluator supports only single machine (aka Local) "
          "setting. Fix: in a cluster use train_and_evaluate(), whose "
          "evaluator task evaluates each checkpoint.")
    if steps is not None and steps <= 0:
      raise ValueError(f"Must specify steps > 0, given: {steps}")
    self._estimator = estimator
    self._input_fn = input_fn
    self._steps = steps
    self._name = name
    self._hooks = front_checks.check_hooks(hooks)
    self._every_n_iter = every_n_iter
    self._timer = _v1.train.SecondOrStepTimer(every_steps=every_n_iter)
    self._iter_count = 0
    self._variables: Dict[str, Any] = {}
    self._snapshot_dir: Optional[str] = None

  def begin(self):
    """Builds the evaluation model once, to refuse what it cannot run."""
    self._timer.reset()
    self._iter_count = 0
    estimator = self._estimator
    config = estimator.config
    setup = ModelSetup(model_fn=estimator.model_fn,
                       model_dir=estimator.model_dir, config=config,
                       params=estimator.params,
                       choices=configuration.resolve(config))
    with tf.Graph().as_default():
      _v1.train.get_or_create_global_step()
      features, labels, _ = call_input_fn(setup, self._input_fn,
                                          ModeKeys.EVAL)
      spec = call_model_fn(setup, features, labels, ModeKeys.EVAL)
    if spec.scaffold.saver is not None:
      raise ValueError("InMemoryEvaluator does not support custom saver. "
                       "Fix: evaluate with evaluate() or train_and_evaluate().")
    if spec.scaffold.init_fn is not None:
      raise ValueError("InMemoryEvaluator does not support custom init_fn. "
                       "Fix: evaluate with evaluate() or train_and_evaluate().")

  def after_create_session(self, session, coord):
    """Takes the training variables and evaluates the initial model."""
    del coord
    if _v1.get_collection(_v1.GraphKeys.SAVEABLE_OBJECTS):
      raise ValueError(
          "InMemoryEvaluator does not support saveables other than global "
          "variables. Fix: evaluate with evaluate() or train_and_evaluate().")
    self._variables = {v.name: v for v in _v1.global_variables()}
    self._snapshot_dir = tempfile.mkdtemp(prefix="in_memory_eval_")
    self._evaluate(session)

  def _evaluate(self, session) -> None:
    values = session.run(self._variables)
    prefix = os.path.join(self._snapshot_dir, "model.ckpt")

    def run():
      _write_checkpoint(prefix, self._variables, values)
      return self._estimator.evaluate(
          self._input_fn, steps=self._steps, hooks=self._hooks,
          checkpoint_path=prefix, name=self._name)

    _in_fresh_thread(run)
    self._timer.update_last_triggered_step(self._iter_count)

  def after_run(self, run_context, run_values):
    """Evaluates every `every_n_iter` steps."""
    del run_values
    self._iter_count += 1
    if self._timer.should_trigger_for_step(self._iter_count):
      self._evaluate(run_context.session)

  def end(self, session):
    """Evaluates the final model and drops the snapshot."""
    try:
      self._evaluate(session)
    finally:
      shutil.rmtree(self._snapshot_dir, ignore_errors=True)
