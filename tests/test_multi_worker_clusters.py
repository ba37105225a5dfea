"""MultiWorkerMirroredStrategy's usual TF_CONFIG and its sync-on-read limit.

- A cluster of workers only (no chief job), with train_distribute set: the
  Estimator's distribute coordinator ran it with worker 0 as the chief; so
  does RunConfig here (it used to refuse it for want of a chief).
- A batch norm's moving statistics under two such workers: the Estimator
  saved their mean over both workers' copies (TF 2.15, checked: 0.0597 after
  2 steps where worker 0's own copy is 0.0796); the chief's save here cannot
  reduce across workers, so train() refuses before any checkpoint (slow: two
  processes).
"""

import glob
import json
import os
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

import estimator_compat as tf_estimator
from estimator_compat.distribute import cluster_tasks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _worker_only(index, workers=2):
  ports = range(30000, 30000 + workers)
  return json.dumps({
      "cluster": {"worker": [f"localhost:{p}" for p in ports]},
      "task": {"type": "worker", "index": index}})


@pytest.mark.parametrize("index", [0, 1, 2])
def test_a_cluster_of_workers_only_has_worker_0_as_chief(index, monkeypatch):
  monkeypatch.setenv("TF_CONFIG", _worker_only(index, workers=3))
  config = tf_estimator.RunConfig(
      train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]))
  assert (config.task_type, config.task_id) == ("worker", index)
  assert config.is_chief == (index == 0)
  assert config.num_worker_replicas == 3
  assert config.num_ps_replicas == 0
  assert config.global_id_in_cluster == index
  assert config.master == f"grpc://localhost:{30000 + index}"


def test_without_train_distribute_a_cluster_needs_its_chief(monkeypatch):
  # The Estimator's RunConfig read TF_CONFIG itself then, and refused.
  monkeypatch.setenv("TF_CONFIG", _worker_only(1))
  with pytest.raises(ValueError, match='must have one "chief" node'):
    tf_estimator.RunConfig()


_PROGRAM = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import estimator_compat
    estimator_compat.install()
    import tensorflow as tf

    task = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    batch = [[1., 2., 3., 10.], [5., 7., 0., -4.]][task]

    def input_fn():
      x = np.array(batch, np.float32).reshape(4, 1)
      return tf.data.Dataset.from_tensors(
          ({"x": x}, np.zeros((4, 1), np.float32))).repeat()

    def model_fn(features, labels, mode):
      h = tf.compat.v1.layers.batch_normalization(
          features["x"], momentum=0.99, training=True, name="bn")
      w = tf.compat.v1.get_variable(
          "w", [1, 1], initializer=tf.compat.v1.constant_initializer(0.5))
      loss = tf.reduce_mean(tf.square(tf.matmul(h, w) - labels))
      updates = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
      with tf.control_dependencies(updates):
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    config = tf.estimator.RunConfig(model_dir=sys.argv[1],
                                    train_distribute=strategy)
    tf.estimator.train_and_evaluate(
        tf.estimator.Estimator(model_fn, config=config),
        tf.estimator.TrainSpec(input_fn, max_steps=2),
        tf.estimator.EvalSpec(input_fn, steps=1))
""")


@pytest.mark.slow
def test_batch_norm_under_two_workers_is_refused_before_any_checkpoint(
    tmp_path):
  program = tmp_path / "program.py"
  program.write_text(_PROGRAM)
  model_dir = str(tmp_path / "model")
  ports = cluster_tasks.free_ports(2)
  workers = [f"127.0.0.1:{port}" for port in ports]
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  started = []
  try:
    for index in (1, 0):
      config = json.dumps({"cluster": {"worker": workers},
                           "task": {"type": "worker", "index": index}})
      started.append(subprocess.Popen(
          [sys.executable, str(program), model_dir],
          env=dict(env, TF_CONFIG=config), stdout=subprocess.PIPE,
          stderr=subprocess.STDOUT, text=True))
    outputs = [process.communicate(timeout=240)[0] for process in started]
  finally:
    for process in started:
      if process.poll() is None:
        process.kill()
        process.wait()
  for process, output in zip(started, outputs):
    assert process.returncode != 0, output[-2000:]
    assert "Variable 'bn/moving_mean' is synchronized on read" in output, (
        output[-2000:])
    assert "multi-worker-sync-on-read-refused" in output
  assert not glob.glob(os.path.join(model_dir, "model.ckpt-*"))
