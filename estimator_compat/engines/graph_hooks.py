"""Hooks the graph engine adds itself (beyond the standard ones)."""

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.training import training_util

from estimator_compat.front import tf_logging as logging
from estimator_compat.errors import GUARD_EXEMPT_COLLECTION, GUARD_WARNING
from estimator_compat.hooks import SessionRunArgs, SessionRunHook


class GlobalStepGuardHook(SessionRunHook):
  """Advances global_step when the model's train_op does not.

  A train_op built without `global_step=` never advances the step, and the
  legacy Estimator then trained forever under `steps=`/`max_steps=`. This hook
  checks after the first step; if the step did not move, it warns once and
  increments the step with every run from then on. A graph whose
  GUARD_EXEMPT_COLLECTION is non-empty keeps its own step (no check).
  """

  def __init__(self):
    self._start = None
    self._checked = False
    self._fixing = False

  def begin(self):
    self._checked = bool(tf.compat.v1.get_collection(GUARD_EXEMPT_COLLECTION))
    self._global_step = tf.compat.v1.train.get_global_step()
    # The standard hooks read the step through this tensor; ordering the
    # increment after it keeps their reads consistent (no stale-step races).
    read = training_util._get_or_create_global_step_read()  # pylint: disable=protected-access
    with tf.control_dependencies([read]):
      self._increment = tf.compat.v1.assign_add(self._global_step, 1,
                                                name="global_step_guard")

  def after_create_session(self, session, coord):
    del coord
    self._start = session.run(self._global_step)

  def before_run(self, run_context):
    del run_context
    if self._fixing:
      return SessionRunArgs(self._increment)
    return None

  def after_run(self, run_context, run_values):
    del run_values
    if self._checked:
      return
    self._checked = True
    if run_context.session.run(self._global_step) == self._start:
      logging.warning(GUARD_WARNING)
      self._fixing = True
      run_context.session.run(self._increment)

  @property
  def fixing(self) -> bool:
    """Whether the guard had to take over incrementing global_step."""
    return self._fixing


class StopAfterNRunsHook(SessionRunHook):
  """Requests a stop after `num_runs` session runs (evaluation `steps`).

  With `progress` (an `EvalProgress`), logs each run's progress as the
  Estimator's evaluation loop did.
  """

  def __init__(self, num_runs, progress=None):
    self._num_runs = num_runs
    self._progress = progress
    self._done = 0

  def after_run(self, run_context, run_values):
    del run_values
    self._done += 1
    if self._progress is not None:
      self._progress.step_done(self._done)
    if self._num_runs is not None and self._done >= self._num_runs:
      run_context.request_stop()

  @property
  def runs(self) -> int:
    return self._done
