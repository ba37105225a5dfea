"""`tf.estimator.experimental.make_stop_at_checkpoint_step_hook`.

The chief stops at `last_step` with a plain StopAtStepHook. A non-chief
worker's own global step can run ahead of what the chief saved, so it stops
only once the newest checkpoint in model_dir is at `last_step` or beyond,
waiting between checkpoint reads so that many workers do not hammer the
file system.
"""

import time
from typing import Any

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.training import training_util

from estimator_compat.checkpoints import checkpoint_reading

_v1 = tf.compat.v1


class StopAtCheckpointStepHook(_v1.train.SessionRunHook):
  """Stops once model_dir's newest checkpoint reached `last_step`.

  Args:
    model_dir: where the chief writes checkpoints.
    last_step: the global step to stop at.
    wait_after_file_check_secs: sleep this long after a read that found an
      older checkpoint.

  Raises:
    ValueError: `last_step` or `model_dir` is None.
  """

  def __init__(self, model_dir: str, last_step: int,
               wait_after_file_check_secs: float = 30):
    if last_step is None:
      raise ValueError("last_step must be specified.")
    if model_dir is None:
      raise ValueError("model_dir must be specified.")
    self.model_dir = model_dir
    self.last_step = last_step
    self.wait_after_file_check_secs = wait_after_file_check_secs
    self._global_step_read = None

  def begin(self):
    # The read TF's own StopAtStepHook uses: it sees the step before the
    # run's increment, hence the + 1 below.
    self._global_step_read = training_util._get_or_create_global_step_read()  # pylint: disable=protected-access
    if self._global_step_read is None:
      raise RuntimeError(
          "Global step should be created to use StopAtCheckpointStepHook. "
          "Fix: create it in the model_fn (tf.compat.v1.train."
          "get_or_create_global_step()).")

  def before_run(self, run_context):
    return _v1.train.SessionRunArgs(self._global_step_read)

  def after_run(self, run_context, run_values):
    if run_values.results + 1 < self.last_step:
      return
    saved = checkpoint_reading.global_step_of(
        checkpoint_reading.latest_checkpoint(self.model_dir))
    if saved >= self.last_step:
      run_context.request_stop()
    else:
      time.sleep(self.wait_after_file_check_secs)


def make_stop_at_checkpoint_step_hook(estimator: Any, last_step: int,
                                      wait_after_file_check_secs: float = 30
                                     ) -> _v1.train.SessionRunHook:
  """A hook that stops training at `last_step`, right for this task.

  Args:
    estimator: the Estimator being trained (its config says if this task is
      the chief, its model_dir where checkpoints are).
    last_step: the global step to stop at.
    wait_after_file_check_secs: a worker's wait between checkpoint reads.

  Returns:
    On the chief a StopAtStepHook(last_step=...), elsewhere a hook that
    stops once the chief's checkpoint reached `last_step`.
  """
  if estimator.config.is_chief:
    return _v1.train.StopAtStepHook(last_step=last_step)
  return StopAtCheckpointStepHook(estimator.model_dir, last_step,
                                  wait_after_file_check_secs)
