"""The seed document's program runs unchanged (but for its FIX lines)."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "examples", "seed", "distributed_training_seed.py")
pytestmark = pytest.mark.slow


def test_seed_program_trains_1000_steps_despite_its_global_step_bug(tmp_path):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  result = subprocess.run([sys.executable, SEED], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stderr.count("train_op did not increase global_step") == 1
  model_dir = tmp_path / "model_dir"
  assert tf.train.latest_checkpoint(str(model_dir)) == str(
      model_dir / "model.ckpt-1000")
  assert tf.train.load_variable(str(model_dir), "global_step") == 1000
  names = [name for name, _ in tf.train.list_variables(str(model_dir))]
  assert "dense/kernel" in names and "dense_1/kernel/Adam" in names
