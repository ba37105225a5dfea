"""A v2 DNNClassifier on a local parameter-server cluster, sharded.

min_shard_bytes=64 shards the embedding and the hidden kernel across the 2
ps tasks; the checkpoint still holds TF 2.15's unpartitioned names and full
shapes, Keras optimizer slots included (`training/Adagrad/<variable>/
accumulator`), so one process resumes it as is.
"""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "tests", "canned_cluster_program.py")
EMBEDDING = "dnn/input_from_feature_columns/input_layer/id_embedding/"

pytestmark = pytest.mark.slow


def _run(args, cwd):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  for key in ("TF_CONFIG", "ESTIMATOR_COMPAT_ENGINE"):
    env.pop(key, None)
  done = subprocess.run([sys.executable, PROGRAM, *args], cwd=cwd, env=env,
                        capture_output=True, text=True, timeout=400,
                        check=False)
  assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
  return done.stdout + done.stderr


def test_sharded_embedding_saves_legacy_names_and_resumes(tmp_path):
  model_dir = str(tmp_path / "model")
  out = _run([model_dir, "60", "--strategy=parameter_server",
              "--local_cluster=worker:2,ps:2", "--min_shard_bytes=64",
              "--max_shards=2"], tmp_path)
  assert "'ps:0': 0, 'ps:1': 0}" in out
  shapes = dict(tf.train.list_variables(model_dir))
  assert not any("part_" in name for name in shapes), sorted(shapes)
  assert shapes[EMBEDDING + "embedding_weights"] == [50, 8]
  assert shapes["training/Adagrad/" + EMBEDDING +
                "embedding_weights/accumulator"] == [50, 8]
  assert shapes["training/Adagrad/dnn/hiddenlayer_0/kernel/accumulator"] == [
      10, 16]
  _run([model_dir, "70"], tmp_path)  # One process, unpartitioned.
  assert tf.train.load_variable(model_dir, "global_step") == 70
