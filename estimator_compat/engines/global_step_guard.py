"""Advancing global_step where the model's train_op does not (function engine)."""

import tensorflow as tf

from estimator_compat.errors import GUARD_WARNING
from estimator_compat.front import tf_logging as logging


class GlobalStepGuard:
  """Advances global_step itself when the model's train_op does not.

  Checked once, after the first call: if the step did not move, it warns
  (as GlobalStepGuardHook does on the graph engine) and from then on adds
  every call's steps.
  """

  def __init__(self, global_step: tf.Variable):
    self._global_step = global_step
    self._checked = False
    self.fixing = False

  def after_call(self, step_before: int, steps: int) -> None:
    """After a call of `steps` steps that started at `step_before`."""
    if not self._checked:
      self._checked = True
      if int(self._global_step.numpy()) == step_before:
        logging.warning(GUARD_WARNING)
        self.fixing = True
    if self.fixing:
      self.add(steps)

  def add(self, steps: int) -> None:
    """Adds steps that ran but were not counted yet (while fixing)."""
    if self.fixing and steps:
      self._global_step.assign_add(steps)
