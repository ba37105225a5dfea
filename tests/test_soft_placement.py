"""A model_fn that asks for a device this machine lacks (soft placement).

The Estimator's default session config allowed soft placement, so TF 2.15
(run by hand) trained a model_fn written `with tf.device("/gpu:0")` on a
machine with no GPU. Here the function engine failed to make its variables
(InvalidArgumentError: Could not satisfy device specification ...
enable_soft_placement=0) whenever TensorFlow's eager context first started
inside its trace, which turned soft placement off for eager ops.
"""

import json
import os
import subprocess
import sys

import numpy as np


def _run(engine):
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  result = subprocess.run(
      [sys.executable, os.path.join(root, "tests", "soft_placement_program.py"),
       engine], capture_output=True, text=True, env=env, timeout=300,
      check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_missing_device_is_placed_softly_as_by_the_estimator():
  function, graph = _run("function"), _run("graph")
  assert not [name for name in function["gpus"] if name.endswith("GPU:7")]
  np.testing.assert_array_equal(function["weights"], graph["weights"])
  assert function["loss"] == graph["loss"]
  assert not np.allclose(function["weights"], 0.1)  # trained
