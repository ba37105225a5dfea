"""A TF 2.15 canned model_dir resumes here, then on TF 2.15 again, then here.

Each leg trains 10 more steps of a canned golden program in the same
model_dir with `migration.recorders.golden_recorder --train_in`: on the real Estimator
(the TF 2.15 virtualenv of tools/record_goldens.sh; skipped without it) and
here. Every leg restores what the other wrote (variables, partitions, batch
norm statistics, v1 `t_0` / `Ftrl` slots, v2 `training/<Optimizer>/` slots,
global_step), and the checkpoint keeps TF 2.15's names throughout.

By default three programs run (a v1 wide & deep model, partitioned, with
TF1 slots of both families; a v2 DNN; a v2 linear model), which keeps CI
within its time; ESTIMATOR_COMPAT_CROSS_RESUME=all runs all seven.
"""

import os
import re
import subprocess
import sys

import pytest
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL_PYTHON = os.path.join(
    os.environ.get("GOLDEN_VENV", os.path.expanduser(
        "~/.cache/estimator-compat/tf215-venv")), "bin", "python")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(REAL_PYTHON),
                       reason="needs the TF 2.15 virtualenv (GOLDEN_VENV)"),
]


def _leg(python, program, model_dir):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  if python == REAL_PYTHON:  # TF 2.15's own tf.keras (no tf-keras there).
    env.pop("TF_USE_LEGACY_KERAS", None)
  done = subprocess.run(
      [python, "-m", "migration.recorders.golden_recorder", "--program", program,
       "--train_in", model_dir, "--steps", "10"],
      capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
      check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  return int(re.search(r"global_step=(\d+)", done.stdout).group(1))


_DEFAULT = ["dnn_linear_combined_classifier_v1", "dnn_classifier_v2",
            "linear_classifier_v2"]
_MORE = ["linear_classifier_v1", "baseline_classifier_v1", "dnn_regressor_v1",
         "dnn_linear_combined_regressor_v2"]


@pytest.mark.parametrize("program", _DEFAULT + (
    _MORE if os.environ.get("ESTIMATOR_COMPAT_CROSS_RESUME") == "all"
    else []))
def test_real_here_real_here(program, tmp_path):
  model_dir = str(tmp_path / "model")
  steps = [_leg(REAL_PYTHON, program, model_dir)]
  real_names = sorted(tf.train.list_variables(model_dir))
  steps += [_leg(sys.executable, program, model_dir),
            _leg(REAL_PYTHON, program, model_dir),
            _leg(sys.executable, program, model_dir)]
  assert steps == [10, 20, 30, 40]
  assert sorted(tf.train.list_variables(model_dir)) == real_names
