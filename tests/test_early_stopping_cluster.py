"""Early stopping on real local clusters (slow: each task imports TF).

Parameter servers: the chief decides and its stop ends every worker (they
run only the chief's scheduled steps), and every task exits 0.
MultiWorkerMirroredStrategy across workers: refused before anything is
written, naming the fix.
"""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from estimator_compat.distribute import cluster_tasks as cluster

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "tests", "cluster_early_stop_program.py")
pytestmark = pytest.mark.slow


def _run(tmp_path, *flags):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  for key in ("TF_CONFIG", "ESTIMATOR_COMPAT_ENGINE", cluster.DONE_FILE_ENV):
    env.pop(key, None)
  model_dir = str(tmp_path / "model")
  done = subprocess.run([sys.executable, PROGRAM, model_dir, *flags],
                        cwd=tmp_path, env=env, capture_output=True, text=True,
                        timeout=300, check=False)
  return done, model_dir


def test_parameter_server_chief_stop_ends_every_worker(tmp_path):
  done, model_dir = _run(tmp_path, "--strategy=parameter_server",
                         "--local_cluster=worker:2,ps:1")
  out = done.stdout + done.stderr
  assert done.returncode == 0, out[-3000:]
  assert ("exit codes: {'chief': 0, 'worker:0': 0, 'worker:1': 0, "
          "'ps:0': 0}") in out
  result = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
  # Checked every 10 steps once a checkpoint at 60 or later exists.
  assert 60 <= result["global_step"] < 200, result
  last = tf.train.latest_checkpoint(model_dir)
  assert int(last.rsplit("-", 1)[1]) == result["global_step"]


def test_multi_worker_mirrored_is_refused_with_the_fix(tmp_path):
  done, model_dir = _run(tmp_path, "--strategy=multi_worker_mirrored",
                         "--local_cluster=worker:2")
  out = done.stdout + done.stderr
  assert done.returncode != 0
  assert "Early stopping under MultiWorkerMirroredStrategy across 2 " in out
  assert "Fix: train with parameter servers" in out
  assert not os.path.exists(model_dir)
