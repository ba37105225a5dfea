"""Parameter-server training's loss without a fetch per closure (issue 26).

A closure returns nothing (a returned loss was copied to the coordinator
after every closure); it stores its loss on a ps and fails on a NaN loss.
The Estimator's behaviour stays: NanLossDuringTrainingError with no
checkpoint after the start's, the log lines' and summaries' losses at
their steps, and the final loss. The program runs its own in-process
loopback cluster in a subprocess.
"""

import json
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "tests", "ps_loss_program.py")


@pytest.mark.slow
def test_nan_log_lines_summaries_and_final_loss(tmp_path):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  for key in ("TF_CONFIG", "ESTIMATOR_COMPAT_ENGINE"):
    env.pop(key, None)
  done = subprocess.run([sys.executable, PROGRAM, str(tmp_path)], env=env,
                        capture_output=True, text=True, timeout=300,
                        check=False)
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  out = dict(line.split(" ", 1) for line in done.stdout.splitlines()
             if line.startswith(("NAN ", "CHECKPOINTS ", "FINAL_LOSS ",
                                 "LOSS_LINES ", "LOSS_SUMMARIES ")))
  assert out["NAN"] == "NanLossDuringTrainingError"
  assert json.loads(out["CHECKPOINTS"]) == ["model.ckpt-0.index"]
  assert math.isfinite(float(out["FINAL_LOSS"]))
  lines = json.loads(out["LOSS_LINES"])
  assert [step for _, step in lines] == [100, 200]
  assert all(math.isfinite(float(loss)) for loss, _ in lines)
  summaries = json.loads(out["LOSS_SUMMARIES"])
  assert [step for step, _ in summaries] == [1, 100, 200]
  assert all(math.isfinite(loss) and loss > 0 for _, loss in summaries)
