"""TPUEstimatorSpec, and the EstimatorSpec it becomes on CPU/GPU.

With `use_tpu=False` the real TPUEstimator ran `eval_metrics` and
`host_call` on the host, in the model's graph: `eval_metrics=(metric_fn,
tensors)` became `eval_metric_ops=metric_fn(*tensors)` (or `**tensors`),
`host_call=(host_fn, tensors)` became ops run by a hook at every step (its
`tf.summary` writers initialized when the session starts and flushed at the
end), and `scaffold_fn()` gave the Scaffold. This module does the same.
"""

import collections
import inspect
from typing import Any, Callable, Dict, Optional, Sequence

import tensorflow as tf
from tensorflow.python.ops import summary_ops_v2  # pylint: disable=g-direct-tensorflow-import

from estimator_compat.front import tf_logging as logging
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine
from estimator_compat.front.fn_args import fn_args
from estimator_compat.spec import EstimatorSpec

_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metrics",
           "export_outputs", "scaffold_fn", "host_call", "training_hooks",
           "evaluation_hooks", "prediction_hooks")


def check_host_call(name: str, host_call: Any) -> None:
  """Validates `eval_metrics` or `host_call`: (fn, list/tuple/dict).

  Raises:
    ValueError / TypeError / RuntimeError: as the real TPUEstimatorSpec.
  """
  if not isinstance(host_call, (tuple, list)):
    raise ValueError(
        f"{name} should be tuple or list. Fix: {name}=(fn, tensors).")
  if len(host_call) != 2:
    raise ValueError(
        f"{name} should have two elements. Fix: {name}=(fn, tensors).")
  fn, tensors = host_call
  if not callable(fn):
    raise TypeError(f"{name}[0] should be callable.")
  if not isinstance(tensors, (tuple, list, dict)):
    raise ValueError(
        f"{name}[1] should be tuple or list, or dict. Fix: pass the "
        "tensors as a list (positional arguments) or a dict (keywords).")
  if isinstance(tensors, (tuple, list)):
    has_varargs = any(p.kind == p.VAR_POSITIONAL for p in _parameters(fn))
    if not has_varargs and len(tensors) != len(fn_args(fn)):
      raise RuntimeError(
          f"In TPUEstimatorSpec.{name}, length of tensors {len(tensors)} "
          "does not match method args of the function, which takes "
          f"{len(fn_args(fn))}.")


def _parameters(fn: Callable[..., Any]) -> list:
  try:
    return list(inspect.signature(fn).parameters.values())
  except (TypeError, ValueError):
    return []


def _call_host_fn(host_call: Sequence[Any]) -> Any:
  fn, tensors = host_call
  if isinstance(tensors, dict):
    return fn(**tensors)
  return fn(*tensors)


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", _FIELDS)):
  """What a TPUEstimator model_fn returns; see `tf.estimator.EstimatorSpec`.

  `eval_metrics=(metric_fn, tensors)`: `metric_fn` gets the tensors (a list
  as positional arguments, a dict as keywords) and returns the
  eval_metric_ops dict. `host_call=(host_fn, tensors)`: `host_fn`'s ops run
  at every step (summaries through `tf.summary` writers). `scaffold_fn()`
  returns the Scaffold.
  """

  def __new__(cls,
              mode: str,
              predictions: Any = None,
              loss: Any = None,
              train_op: Any = None,
              eval_metrics: Optional[Sequence[Any]] = None,
              export_outputs: Optional[Dict[str, Any]] = None,
              scaffold_fn: Optional[Callable[[], Any]] = None,
              host_call: Optional[Sequence[Any]] = None,
              training_hooks: Optional[Sequence[Any]] = None,
              evaluation_hooks: Optional[Sequence[Any]] = None,
              prediction_hooks: Optional[Sequence[Any]] = None
              ) -> "TPUEstimatorSpec":
    """Validates the host calls and hooks.

    Raises:
      ValueError / TypeError / RuntimeError: a malformed host call, or a
        hook that is not a SessionRunHook.
    """
    if eval_metrics is not None:
      check_host_call("eval_metrics", eval_metrics)
    if host_call is not None:
      check_host_call("host_call", host_call)
    training_hooks = tuple(training_hooks or ())
    evaluation_hooks = tuple(evaluation_hooks or ())
    prediction_hooks = tuple(prediction_hooks or ())
    for hook in training_hooks + evaluation_hooks + prediction_hooks:
      if not isinstance(hook, tf.compat.v1.train.SessionRunHook):
        raise TypeError(
            f"All hooks must be SessionRunHook instances, given: {hook}")
    return super().__new__(  # type: ignore[call-arg]  # fields from a variable
        cls, mode, predictions, loss, train_op, eval_metrics, export_outputs,
        scaffold_fn, host_call, training_hooks, evaluation_hooks,
        prediction_hooks)

  def as_estimator_spec(self) -> EstimatorSpec:
    """The EstimatorSpec the real TPUEstimator ran on CPU/GPU.

    Raises:
      NeedsGraphEngine: a host_call while the function engine traces the
        model_fn (its summary writers need a TF1 Session).
    """
    hooks = ()
    if self.host_call is not None:
      if tf.inside_function():
        raise NeedsGraphEngine(
            "TPUEstimatorSpec.host_call creates tf.summary writers and runs "
            "their ops at every step through a hook, which needs a TF1 "
            f"Session graph. {GRAPH_ENGINE_FIX}")
      hooks = (HostCallHook(_call_host_fn(self.host_call)),)
    eval_metric_ops = None
    if self.eval_metrics is not None:
      eval_metric_ops = _call_host_fn(self.eval_metrics)
    scaffold = self.scaffold_fn() if self.scaffold_fn else None
    return EstimatorSpec(
        mode=self.mode, predictions=self.predictions, loss=self.loss,
        train_op=self.train_op, eval_metric_ops=eval_metric_ops,
        export_outputs=self.export_outputs, scaffold=scaffold,
        training_hooks=self.training_hooks + hooks,
        evaluation_hooks=self.evaluation_hooks + hooks,
        prediction_hooks=self.prediction_hooks + hooks)


class HostCallHook(tf.compat.v1.train.SessionRunHook):
  """Runs a host_call's ops at every step; its summary writers around it."""

  def __init__(self, fetches: Any):
    self._fetches = fetches
    self._init_ops = []
    self._flush_ops = []

  def begin(self) -> None:
    self._init_ops = summary_ops_v2.summary_writer_initializer_op()
    self._flush_ops = [summary_ops_v2.legacy_raw_flush(writer=op.inputs[0])
                       for op in self._init_ops]

  def after_create_session(self, session, coord) -> None:
    del coord
    session.run(self._init_ops)

  def before_run(self, run_context) -> tf.compat.v1.train.SessionRunArgs:
    del run_context
    return tf.compat.v1.train.SessionRunArgs(self._fetches)

  def end(self, session) -> None:
    session.run(self._flush_ops)


class ExamplesPerSecondHook(tf.compat.v1.train.SessionRunHook):
  """Reports global_step/sec and examples/sec (batch size x steps/sec).

  As the real one (a StepCounterHook): logged, and written as summaries to
  `output_dir` (or `summary_writer`), every N steps or seconds.
  """

  def __init__(self, batch_size: int, every_n_steps: Optional[int] = 100,
               every_n_secs: Optional[float] = None,
               output_dir: Optional[str] = None, summary_writer: Any = None):
    if (every_n_steps is None) == (every_n_secs is None):
      raise ValueError(
          "exactly one of every_n_steps and every_n_secs should be provided.")
    self._batch_size = batch_size
    self._timer = tf.compat.v1.train.SecondOrStepTimer(
        every_steps=every_n_steps, every_secs=every_n_secs)
    self._output_dir = output_dir
    self._summary_writer = summary_writer
    self._global_step = None

  def begin(self) -> None:
    if self._summary_writer is None and self._output_dir:
      self._summary_writer = tf.compat.v1.summary.FileWriterCache.get(
          self._output_dir)
    self._global_step = tf.compat.v1.train.get_global_step()
    if self._global_step is None:
      raise RuntimeError(
          "Global step should be created to use ExamplesPerSecondHook.")

  def before_run(self, run_context) -> tf.compat.v1.train.SessionRunArgs:
    del run_context
    return tf.compat.v1.train.SessionRunArgs(self._global_step)

  def after_run(self, run_context, run_values) -> None:
    if not self._timer.should_trigger_for_step(run_values.results + 1):
      return
    global_step = int(run_context.session.run(self._global_step))
    if self._timer.should_trigger_for_step(global_step):
      elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(
          global_step)
      if elapsed_time is not None:
        self._log_and_record(elapsed_steps, elapsed_time, global_step)

  def _log_and_record(self, elapsed_steps: int, elapsed_time: float,
                      global_step: int) -> None:
    steps_per_sec = elapsed_steps / elapsed_time
    examples_per_sec = self._batch_size * steps_per_sec
    if self._summary_writer is not None:
      for tag, value in (("global_step/sec", steps_per_sec),
                         ("examples/sec", examples_per_sec)):
        self._summary_writer.add_summary(
            tf.compat.v1.Summary(value=[
                tf.compat.v1.Summary.Value(tag=tag, simple_value=value)]),
            global_step)
    logging.info("global_step/sec: %g", steps_per_sec)
    logging.info("examples/sec: %g", examples_per_sec)
