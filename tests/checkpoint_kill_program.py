"""Trains the test classifier to a max_steps; the kill test kills it.

Usage: python -m tests.checkpoint_kill_program MODEL_DIR MAX_STEPS KEEP [STEP]
Saves every step, so that kills often land inside a checkpoint save. With
STEP, the process dies (exit 9) in the save of that step, after the state
file was written and before the oldest checkpoint is deleted.
"""

import os
import sys

import tensorflow as tf

from tests import models


def _die_in_rotation_at(step: int) -> None:
  saver_class = tf.compat.v1.train.Saver
  delete = saver_class._MaybeDeleteOldCheckpoints  # pylint: disable=protected-access

  def maybe_delete(self, *args, **kwargs):
    if self.last_checkpoints and self.last_checkpoints[-1].endswith(
        f"-{step}"):
      os._exit(9)  # pylint: disable=protected-access
    return delete(self, *args, **kwargs)

  saver_class._MaybeDeleteOldCheckpoints = maybe_delete  # pylint: disable=protected-access


def main(model_dir: str, max_steps: int, keep: int) -> None:
  est = models.estimator(model_dir, save_checkpoints_steps=1,
                         keep_checkpoint_max=keep, log_step_count_steps=None,
                         save_summary_steps=None)
  est.train(models.input_fn(), max_steps=max_steps)
  print("FINAL", est.latest_checkpoint())


if __name__ == "__main__":
  if len(sys.argv) > 4:
    _die_in_rotation_at(int(sys.argv[4]))
  main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
