"""The TF docs tutorial "Create an Estimator from a Keras model", unchanged.

tests/legacy_programs/keras_model_to_estimator.py holds the tutorial's code;
tensorflow_datasets is a synthetic stand-in (tests/legacy_programs/
tfds_stub). After install() it must train 500 steps, evaluate, and leave
the model_dir the real Estimator (TF 2.15) left for the same code: the same
checkpoint variables and layout (goldens/keras_model_to_estimator.json,
written by tests.legacy_programs.describe on the reference run). Dropout
and the initialization are unseeded, so the loss is only checked to have
dropped well below chance (ln 3 = 1.10; the reference run printed 0.32).
"""

import json
import os
import re
import subprocess
import sys

from tests.legacy_programs import describe

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "legacy_programs")


def test_tutorial_runs_unchanged(tmp_path):
  env = dict(os.environ, TMPDIR=str(tmp_path), TF_CPP_MIN_LOG_LEVEL="3",
             PYTHONPATH=os.pathsep.join(
                 [os.path.join(PROGRAMS, "tfds_stub"), ROOT]))
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  done = subprocess.run(
      [sys.executable, os.path.join(PROGRAMS, "run_unchanged.py"),
       os.path.join(PROGRAMS, "keras_model_to_estimator.py")],
      capture_output=True, text=True, env=env, timeout=300, check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  printed = re.search(r"Eval result: \{'loss': (?:np\.float32\()?([0-9.]+)\)?,"
                      r" 'global_step': (?:np\.int64\()?(\d+)", done.stdout)
  assert printed, done.stdout[-2000:]
  assert int(printed.group(2)) == 500
  assert float(printed.group(1)) < 0.9
  model_dirs = [d for d in os.listdir(tmp_path) if d.startswith("tmp")]
  assert len(model_dirs) == 1
  with open(os.path.join(PROGRAMS, "goldens",
                         "keras_model_to_estimator.json")) as f:
    golden = json.load(f)
  assert describe.describe(str(tmp_path / model_dirs[0])) == golden
