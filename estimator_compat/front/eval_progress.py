"""The log lines of an evaluation, as the Estimator printed them.

TF 2.15's Estimator evaluated through TensorFlow's evaluation loop, which
logged when it started, the progress every step (every tenth of the steps
from 20 steps on; every step when `steps` is None), the inference time and
when it finished. Both engines print the same lines through this class.
"""

import math
import time
from typing import Optional

from estimator_compat.front import tf_logging as logging


class EvalProgress:
  """Logs the start, progress and end of one evaluation.

  Args:
    steps: the evaluation's `steps`, or None to run until the input ends.
  """

  def __init__(self, steps: Optional[int]):
    self._steps = steps
    self._every = 1 if steps is None or steps < 20 else math.floor(steps / 10)
    self._started = None

  def start(self) -> None:
    """Logs the start; call it before the checkpoint is restored."""
    logging.info("Starting evaluation at " +
                 time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime()))
    self._started = time.time()

  def step_done(self, completed: int) -> None:
    """Logs progress after `completed` evaluation steps."""
    if self._steps is None:
      logging.info("Evaluation [%d]", completed)
    elif completed % self._every == 0 or completed == self._steps:
      logging.info("Evaluation [%d/%d]", completed, self._steps)

  def finish(self) -> None:
    """Logs the inference time and the end."""
    logging.info("Inference Time : {:0.5f}s".format(
        time.time() - self._started))
    logging.info("Finished evaluation at " +
                 time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime()))
