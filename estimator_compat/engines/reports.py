"""Step-rate and loss log lines and summaries that no hook can fetch."""

import time
from typing import Optional

import tensorflow as tf

from estimator_compat.front import tf_logging as logging


class StepReports:
  """Log lines and summaries for runners whose hooks cannot fetch tensors.

  The Estimator's StepCounterHook and LoggingTensorHook lines every
  `log_step_count_steps` steps, and the `loss` and `global_step/sec`
  summaries (on the chief), written from what the controller observed.
  """

  def __init__(self, *, log_step_count_steps: Optional[int],
               save_summary_steps: Optional[int], start: int,
               summary_dir: Optional[str]):
    self._log_every = log_step_count_steps
    self._summary_every = save_summary_steps
    self._last_log = (time.time(), start)
    self._calls = 0
    self._writer = None
    if summary_dir:
      with tf.Graph().as_default():
        self._writer = tf.compat.v1.summary.FileWriterCache.get(summary_dir)

  def steps_to_next(self, step: int) -> Optional[int]:
    """Steps from `step` to the next one that logs or writes a summary."""
    if self._calls == 0 and self._summary_every:
      return 1  # The first call always writes the loss summary.
    wanted = []
    if self._log_every:
      wanted.append(self._last_log[1] + self._log_every - step)
    if self._summary_every:
      wanted.append((step // self._summary_every + 1) * self._summary_every
                    - step)
    return max(1, min(wanted)) if wanted else None

  def count_call(self) -> None:
    """Counts a call (the first one always writes the loss summary)."""
    self._calls += 1

  def wants_loss(self, step_before: int, step: int) -> bool:
    """Whether `after_call` at `step` writes a log line or a loss summary."""
    return self._log_due(step) or self._summary_due(step_before, step)

  def _log_due(self, step: int) -> bool:
    return bool(self._log_every and
                step - self._last_log[1] >= self._log_every)

  def _summary_due(self, step_before: int, step: int) -> bool:
    return bool(self._summary_every and (
        self._calls == 1 or
        step // self._summary_every > step_before // self._summary_every))

  def after_call(self, *, loss: Optional[float], last_loss: Optional[float],
                 step_before: int, step: int) -> None:
    """Logs and writes summaries due between `step_before` and `step`."""
    last_time, last_step = self._last_log
    if self._log_due(step):
      now = time.time()
      rate = (step - last_step) / max(now - last_time, 1e-9)
      logging.info("global_step/sec: %g", rate)
      logging.info("loss = %s, step = %d (%.3f sec)", last_loss, step,
                   now - last_time)
      self._scalar("global_step/sec", rate, step)
      self._last_log = (now, step)
    if loss is not None and self._summary_due(step_before, step):
      self._scalar("loss", last_loss, step)

  def _scalar(self, tag: str, value: float, step: int) -> None:
    if self._writer is None:
      return
    summary = tf.compat.v1.Summary()
    summary.value.add(tag=tag, simple_value=float(value))
    self._writer.add_summary(summary, step)

  def close(self) -> None:
    if self._writer is not None:
      self._writer.flush()
