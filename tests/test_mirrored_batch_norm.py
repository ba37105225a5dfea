"""Batch norm's moving statistics under MirroredStrategy match the Estimator.

Each replica updates its own copy of the moving mean and variance (TF's
sync-on-read variables); the Estimator's checkpoint held their mean, so its
evaluation and predictions used the mean of the replicas' statistics
(differential finding G12: saving replica 0's copy changed all of them).
The cases run in a subprocess (tests/mirrored_batch_norm_cases.py), since
logical devices must be set before TensorFlow starts, and are compared with
the real Estimator's results (tests/goldens/mirrored_batch_norm.json, from
tools/record_mirrored_batch_norm.sh). Strategies run on the function engine
only (the graph engine refuses them).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "goldens", "mirrored_batch_norm.json")
TIGHT = 1e-6  # the same float32 ops; anything larger is a bug

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("mirrored_bn") / "results.json")
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("TF_CONFIG", None)
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  done = subprocess.run(
      [sys.executable, os.path.join(ROOT, "tests",
                                    "mirrored_batch_norm_cases.py"),
       "--side", "new", "--out", out],
      capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
      check=False)
  assert done.returncode == 0, done.stderr[-4000:]
  with open(out) as f:
    return json.load(f)


@pytest.fixture(scope="module")
def golden():
  with open(GOLDEN) as f:
    recorded = json.load(f)
  assert recorded["tensorflow_version"].startswith("2.15")
  return recorded


@pytest.mark.parametrize("kind", ["v1_layers", "keras"])
def test_variables_match_the_real_estimator(results, golden, kind):
  ours, theirs = results[kind]["variables"], golden[kind]["variables"]
  assert sorted(ours) == sorted(theirs)
  for name in theirs:
    np.testing.assert_allclose(ours[name], theirs[name], rtol=TIGHT,
                               atol=TIGHT, err_msg=name)


@pytest.mark.parametrize("kind", ["v1_layers", "keras"])
def test_evaluation_and_predictions_match_the_real_estimator(
    results, golden, kind):
  np.testing.assert_allclose(results[kind]["eval_loss"],
                             golden[kind]["eval_loss"], rtol=TIGHT)
  np.testing.assert_allclose(results[kind]["predictions"],
                             golden[kind]["predictions"], rtol=TIGHT)
