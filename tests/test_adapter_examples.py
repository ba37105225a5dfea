"""The adapter examples train the seed program's model_fn as the Estimator.

Each example (examples/adapters/) trains the seed program's own model_fn,
fed by its own numpy_input_fn, in a TF2 loop; its training accuracy must be
within 2 points of the Estimator path's on the same model_fn and input.
"""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from examples.adapters import cluster_loop, custom_loop, keras_fit, seed_model

POINTS = 0.02


@pytest.fixture(scope="module")
def estimator_accuracy(tmp_path_factory):
  return seed_model.estimator_accuracy(str(tmp_path_factory.mktemp("seed")))


def test_keras_fit(estimator_accuracy):
  assert abs(keras_fit.main() - estimator_accuracy) <= POINTS


def test_custom_loop_with_strategy_run(estimator_accuracy, tmp_path):
  assert abs(custom_loop.main(model_dir=str(tmp_path)) -
             estimator_accuracy) <= POINTS
  # Its checkpoint is the Estimator's: it resumes from step 1000.
  assert int(tf.train.load_variable(str(tmp_path), "global_step")) == (
      seed_model.STEPS)


@pytest.mark.slow
def test_cluster_coordinator_loop(estimator_accuracy):
  # One worker: the steps apply in order, as in one process. (With more,
  # parameter-server training is asynchronous and runs spread; see the
  # example's docstring.) Run as its own process, as a user runs it: its
  # ParameterServerStrategy connects the process's eager context to the
  # loopback cluster for good, and once its servers are gone every later
  # test in this process that makes a variable would fail to reach them.
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("TF_CONFIG", None)
  done = subprocess.run(
      [sys.executable, "-m", cluster_loop.__name__, "--workers", "1"],
      cwd=root, env=env, capture_output=True, text=True, timeout=900,
      check=False)
  lines = [l for l in done.stdout.splitlines() if l.startswith("accuracy ")]
  assert done.returncode == 0 and lines, done.stderr[-3000:]
  accuracy = float(lines[-1].split()[1])
  assert abs(accuracy - estimator_accuracy) <= POINTS
