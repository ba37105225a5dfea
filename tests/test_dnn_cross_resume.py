"""A TF 2.15 DNN / wide & deep model_dir resumes here, there and back.

Each leg trains 10 more steps of a canned golden program in one model_dir
with `migration.golden_recorder --train_in`: first on the real Estimator
(the TF 2.15 virtualenv of tools/record_goldens.sh; skipped without it),
then here, there again and here again. Each leg restores everything the
other wrote (variables, batch norm statistics, v1 `t_0` slots, v2
`training/<Optimizer>/` slots, global_step), and the checkpoint keeps TF
2.15's names and shapes throughout.
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
  if python == REAL_PYTHON:
    # Set by estimator_compat for tf-keras; TF 2.15 has no tf-keras.
    env.pop("TF_USE_LEGACY_KERAS", None)
  done = subprocess.run(
      [python, "-m", "migration.golden_recorder", "--program", program,
       "--train_in", model_dir, "--steps", "10"],
      capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
      check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  return int(re.search(r"global_step=(\d+)", done.stdout).group(1))


@pytest.mark.parametrize("program", [
    "dnn_classifier_v2", "dnn_regressor_v1",
    "dnn_linear_combined_regressor_v2", "dnn_linear_combined_classifier_v1"])
def test_real_here_real_here(program, tmp_path):
  model_dir = str(tmp_path / "model")
  steps = [_leg(REAL_PYTHON, program, model_dir)]
  real_names = sorted(tf.train.list_variables(model_dir))
  steps += [_leg(sys.executable, program, model_dir),
            _leg(REAL_PYTHON, program, model_dir),
            _leg(sys.executable, program, model_dir)]
  assert steps == [10, 20, 30, 40]
  assert sorted(tf.train.list_variables(model_dir)) == real_names
