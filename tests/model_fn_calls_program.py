"""Counts model_fn calls per train() call under a strategy (one process).

  python tests/model_fn_calls_program.py STRATEGY MODEL_DIR

STRATEGY: default, mirrored or parameter_server. For parameter_server the
process starts its own loopback cluster (2 ps, 1 worker: one worker runs
the steps in order, so the checkpoint is deterministic) as in-process
servers and runs as its chief. Prints `COUNTS [...]`: the TRAIN-mode
model_fn calls of each of two train() calls on one Estimator, then
`CHECKPOINT {...}` with every checkpoint value's bytes as hex (so two runs
can be compared bit for bit).
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

from estimator_compat.distribute import cluster_tasks

CALLS = []


def model_fn(features, labels, mode):
  if mode == tf.estimator.ModeKeys.TRAIN:
    CALLS.append(mode)
  hidden = tf.compat.v1.layers.dense(features, 8, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(hidden, 3)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  rng = np.random.RandomState(3)
  x = rng.normal(size=(64, 5)).astype(np.float32)
  y = rng.randint(0, 3, 64).astype(np.int64)
  return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(8)


def start_cluster(workers: int = 1) -> None:
  """Starts 2 ps and `workers` workers in this process; makes it the chief."""
  cluster = cluster_tasks.loopback_cluster(workers=workers, ps=2)
  # Worker and ps servers run closures of several functions at once.
  config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=8)
  for job in ("ps", "worker"):
    for index in range(len(cluster[job])):
      tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name=job,
                           task_index=index, protocol="grpc", config=config,
                           start=True)
  os.environ["TF_CONFIG"] = cluster_tasks.tf_config(cluster, "chief", 0)


def main(strategy: str, model_dir: str) -> None:
  if strategy == "parameter_server":
    start_cluster()
  import estimator_compat  # pylint: disable=g-import-not-at-top
  estimator_compat.install()
  from estimator_compat.distribute import flags  # pylint: disable=g-import-not-at-top
  flags.apply([sys.argv[0], f"--strategy={strategy}"])
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1)
  estimator = tf.estimator.Estimator(model_fn, config=config)
  counts = []
  for steps in (6, 4):
    before = len(CALLS)
    estimator.train(input_fn, steps=steps)
    counts.append(len(CALLS) - before)
  print("COUNTS " + json.dumps(counts), flush=True)
  reader = tf.train.load_checkpoint(model_dir)
  values = {name: reader.get_tensor(name).tobytes().hex()
            for name in reader.get_variable_to_shape_map()}
  print("CHECKPOINT " + json.dumps(values, sort_keys=True), flush=True)
  sys.stdout.flush()
  os._exit(0)  # pylint: disable=protected-access  # in-process servers never stop


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2])
