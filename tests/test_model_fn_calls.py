"""How often train() calls model_fn, per strategy (issue 26).

The Estimator builds one TRAIN graph per train() call, so it calls model_fn
once per call (checked on TF 2.15 for the default strategy and a one-device
MirroredStrategy; each task of a parameter-server cluster builds its graph
once as well). A second call on the same Estimator builds its graph anew and
calls model_fn once again. Each case runs in its own process: the
parameter-server one starts an in-process loopback cluster that lives as long
as its process.
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "tests", "model_fn_calls_program.py")


def _run(strategy, model_dir):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  for key in ("TF_CONFIG", "ESTIMATOR_COMPAT_ENGINE"):
    env.pop(key, None)
  done = subprocess.run([sys.executable, PROGRAM, strategy, str(model_dir)],
                        env=env, capture_output=True, text=True, timeout=300,
                        check=False)
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  lines = dict(line.split(" ", 1) for line in done.stdout.splitlines()
               if line.startswith(("COUNTS ", "CHECKPOINT ")))
  return json.loads(lines["COUNTS"]), json.loads(lines["CHECKPOINT"])


@pytest.mark.slow
def test_parameter_server_train_calls_model_fn_once_per_call(tmp_path):
  counts, checkpoint = _run("parameter_server", tmp_path)
  assert counts == [1, 1]  # First train() and a second one on the same Estimator.
  assert "global_step" in checkpoint


@pytest.mark.parametrize("strategy", ["default", "mirrored"])
def test_other_strategies_call_model_fn_once_per_call(tmp_path, strategy):
  counts, _ = _run(strategy, tmp_path)
  assert counts == [1, 1]
