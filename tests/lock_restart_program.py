"""Trains the test classifier; the container-restart test kills and reruns it.

Usage: python -m tests.lock_restart_program MODEL_DIR STEPS [MARKER]
With MARKER, the first training step writes this process's pid (as its pid
namespace sees it) to MARKER and then waits to be killed.
"""

import sys
import time

import estimator_compat as tfe
from tests import models


class _WaitToBeKilled(tfe.SessionRunHook):

  def __init__(self, marker: str):
    self._marker = marker

  def before_run(self, run_context):
    import os  # pylint: disable=g-import-not-at-top
    with open(self._marker, "w", encoding="utf-8") as f:
      f.write(str(os.getpid()))
    time.sleep(300)


def main(model_dir: str, steps: int, marker: str = "") -> None:
  hooks = [_WaitToBeKilled(marker)] if marker else []
  est = models.estimator(model_dir, save_checkpoints_steps=1)
  est.train(models.input_fn(), steps=steps, hooks=hooks)
  print("FINAL", est.latest_checkpoint())


if __name__ == "__main__":
  main(*sys.argv[1:2], int(sys.argv[2]), *sys.argv[3:])
