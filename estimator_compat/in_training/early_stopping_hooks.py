"""The hooks behind `tf.estimator.experimental`'s early-stopping functions.

The chief decides: `StopOnPredicateHook` calls a predicate on a step or time
schedule and, when it answers True, sets the graph variable
`signal_early_stopping/STOP` and stops. Workers that run their own training
(the Estimator's between-graph replication) run `CheckForStoppingHook`,
which reads that variable every step and stops once it is set. Under the
function engine's parameter-server training the chief schedules every
worker's steps, so its stop ends them all (its hooks see a stand-in graph
there, where STOP is set nowhere).

Under a `train_distribute` strategy the Estimator used a third hook (for any
strategy, not only multi-worker ones): every step it read a SUM-aggregated
integer `signal_early_stopping/STOP` and each worker added its own vote, 1
to stop; `SummedVoteStoppingHook` keeps that protocol on one worker
(early_stopping.py refuses several MultiWorkerMirroredStrategy workers).

Both engines run these hooks: `begin()` builds the variable in the model's
graph (the function engine's trace captures it as a model variable), and
the writes are made through `session.run` of an assign op.
"""

from typing import Callable, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.training import training_util

from estimator_compat.front import tf_logging as logging
from estimator_compat.errors import UnsupportedOnFunctionEngine

_v1 = tf.compat.v1
STOP_SCOPE = "signal_early_stopping"
STOP_NAME = "STOP"


def get_or_create_stop_var(summed_votes: bool = False) -> tf.Variable:
  """The default graph's `signal_early_stopping/STOP` variable.

  Args:
    summed_votes: the strategy form: an int32 that sums each worker's vote
      (ON_WRITE synchronization, SUM aggregation) instead of a bool.

  Returns:
    The variable: global (checkpointed), not trainable, initially off.
  """
  if summed_votes:
    kwargs = dict(dtype=tf.int32, initializer=_v1.constant_initializer(0),
                  synchronization=tf.VariableSynchronization.ON_WRITE,
                  aggregation=tf.VariableAggregation.SUM)
  else:
    kwargs = dict(dtype=tf.bool, initializer=_v1.constant_initializer(False))
  with _v1.variable_scope(STOP_SCOPE, values=[], reuse=_v1.AUTO_REUSE):
    return _v1.get_variable(
        STOP_NAME, shape=[], trainable=False,
        collections=[_v1.GraphKeys.GLOBAL_VARIABLES], **kwargs)


def _step_before_run() -> tf.Tensor:
  """The global step as read before the step's update (as the Estimator's
  model read it), so schedules and log lines count the steps it counted."""
  return training_util._get_or_create_global_step_read()  # pylint: disable=protected-access


def _check_predicate(should_stop_fn: Callable[[], bool]) -> None:
  if not callable(should_stop_fn):
    raise TypeError("`should_stop_fn` must be callable.")


class StopOnPredicateHook(_v1.train.SessionRunHook):
  """The chief's hook: asks `should_stop_fn` on schedule, stops on True.

  Args:
    should_stop_fn: a callable of no arguments returning a bool.
    run_every_secs: ask at most this often, in seconds.
    run_every_steps: or ask every this many global steps.
  """

  def __init__(self, should_stop_fn: Callable[[], bool],
               run_every_secs: Optional[float] = 60,
               run_every_steps: Optional[int] = None):
    _check_predicate(should_stop_fn)
    self._should_stop_fn = should_stop_fn
    self._timer = _v1.train.SecondOrStepTimer(every_secs=run_every_secs,
                                              every_steps=run_every_steps)
    self._global_step = None
    self._stop_var = None
    self._set_stop = None

  def begin(self):
    self._global_step = _step_before_run()
    self._stop_var = get_or_create_stop_var()
    self._set_stop = _v1.assign(self._stop_var, True)

  def before_run(self, run_context):
    return _v1.train.SessionRunArgs(self._global_step)

  def after_run(self, run_context, run_values):
    step = run_values.results
    if not self._timer.should_trigger_for_step(step):
      return
    self._timer.update_last_triggered_step(step)
    if not self._should_stop_fn():
      return
    logging.info("Requesting early stopping at global step %d", step)
    try:
      run_context.session.run(self._set_stop)
    except UnsupportedOnFunctionEngine:
      # Parameter-server training on the function engine: the chief runs
      # the only hooks (begun in a stand-in graph, where STOP is no model
      # variable) and schedules every worker's steps, so its stop ends
      # them all; there is no flag to set for workers to read.
      logging.info("Parameter-server training: the chief's stop ends every "
                   "worker's steps; signal_early_stopping/STOP is not set.")
    run_context.request_stop()


class CheckForStoppingHook(_v1.train.SessionRunHook):
  """A non-chief worker's hook: stops once the chief set the STOP variable."""

  def __init__(self):
    self._stop_var = None

  def begin(self):
    self._stop_var = get_or_create_stop_var()

  def before_run(self, run_context):
    return _v1.train.SessionRunArgs(self._stop_var)

  def after_run(self, run_context, run_values):
    if run_values.results:
      logging.info("Early stopping requested, suspending run.")
      run_context.request_stop()


class SummedVoteStoppingHook(_v1.train.SessionRunHook):
  """Early stopping under a `train_distribute` strategy.

  Every step it reads the summed votes and stops if any worker voted to
  stop; on schedule it asks `should_stop_fn` and adds its vote (1 to stop,
  0 otherwise), so that all workers take part in the same write.

  Args:
    should_stop_fn: a callable of no arguments returning a bool.
    run_every_steps: ask every this many global steps.
  """

  def __init__(self, should_stop_fn: Callable[[], bool],
               run_every_steps: Optional[int] = None):
    _check_predicate(should_stop_fn)
    self._should_stop_fn = should_stop_fn
    self._timer = _v1.train.SecondOrStepTimer(every_secs=None,
                                              every_steps=run_every_steps)
    self._global_step = None
    self._stop_var = None
    self._votes = {}

  def begin(self):
    self._global_step = _step_before_run()
    self._stop_var = get_or_create_stop_var(summed_votes=True)
    strategy = tf.distribute.get_strategy()
    # One write per vote value: no feed is needed, which the function engine
    # cannot give.
    for vote in (0, 1):
      self._votes[vote] = strategy.run(
          lambda var, v=vote: var.assign_add(tf.constant(v, tf.int32)),
          args=(self._stop_var,))

  def before_run(self, run_context):
    return _v1.train.SessionRunArgs({"global_step": self._global_step,
                                     "stop_var": self._stop_var})

  def after_run(self, run_context, run_values):
    step = run_values.results["global_step"]
    if run_values.results["stop_var"] > 0:
      logging.info("Early stopping requested, suspending run.")
      run_context.request_stop()
      return
    if not self._timer.should_trigger_for_step(step):
      return
    self._timer.update_last_triggered_step(step)
    stop = bool(self._should_stop_fn())
    run_context.session.run(self._votes[int(stop)])
    if stop:
      logging.info("Requesting early stopping at global step %d", step)
