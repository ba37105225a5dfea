"""Trains the test classifier to a max_steps; the kill test kills it.

Usage: python -m tests.checkpoint_kill_program MODEL_DIR MAX_STEPS KEEP
Saves every step, so that kills often land inside a checkpoint save.
"""

import sys

from tests import models


def main(model_dir: str, max_steps: int, keep: int) -> None:
  est = models.estimator(model_dir, save_checkpoints_steps=1,
                         keep_checkpoint_max=keep, log_step_count_steps=None,
                         save_summary_steps=None)
  est.train(models.input_fn(), max_steps=max_steps)
  print("FINAL", est.latest_checkpoint())


if __name__ == "__main__":
  main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
