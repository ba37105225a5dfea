"""Step 2 with parameter servers: a ClusterCoordinator loop over a model_fn.

  python -m examples.adapters.cluster_loop [--workers 1] [--steps 1000]

Starts a loopback cluster (a chief, here, plus ps and worker servers as
subprocesses on 127.0.0.1), then trains the seed program's model_fn with
ParameterServerStrategy: the variables live on the ps task under their
legacy names, each scheduled step runs the model_fn's own train_op on a
worker (asynchronously, as parameter-server training always did). The
servers stop when this process ends.

With one worker the steps apply in order and the accuracy is the Estimator
path's (tests/test_adapter_examples.py). With two, steps apply
asynchronously and runs spread: on a loaded 2-core machine this loop gave
0.36-0.44 after 1000 steps, and the Estimator's own PS path on the same
machine 0.436 (one process: 0.493); see docs/decisions.md ("Adapters").
"""

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Dict, List

import tensorflow as tf

import estimator_compat
from estimator_compat import adapters
from estimator_compat import ModeKeys
from estimator_compat.distribute import cluster_tasks
from estimator_compat.distribute import strategies
from examples.adapters import seed_model

_SERVE = "--serve"


def serve(cluster: Dict[str, List[str]], job: str, index: int,
          parent: int) -> None:
  """Runs one ps or worker server until the chief process is gone."""
  config = tf.compat.v1.ConfigProto(
      # Worker servers of PS training need >= 8 (fewer hang after a step).
      inter_op_parallelism_threads=strategies.PS_WORKER_INTER_OP_THREADS)
  tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name=job,
                       task_index=index, protocol="grpc", config=config,
                       start=True)
  while cluster_tasks.process_alive(parent):
    time.sleep(0.5)


def start_servers(cluster: Dict[str, List[str]]) -> List[subprocess.Popen]:
  """One subprocess per ps and worker task of `cluster`."""
  root = os.path.dirname(os.path.dirname(os.path.dirname(
      os.path.abspath(__file__))))
  env = dict(os.environ, PYTHONPATH=root)
  env.pop("TF_CONFIG", None)
  return [subprocess.Popen(
      [sys.executable, "-m", "examples.adapters.cluster_loop", _SERVE,
       json.dumps(cluster), job, str(index), str(os.getpid())], env=env)
          for job in ("ps", "worker") for index in range(len(cluster[job]))]


def train(cluster: Dict[str, List[str]], steps: int) -> float:
  """Trains on the cluster; returns the training accuracy."""
  resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
      tf.train.ClusterSpec(cluster), task_type="chief", task_id=0,
      rpc_layer="grpc")
  strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
  coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(
      strategy)
  # Each worker calls the input_fn (numpy_input_fn's generator then serves
  # it from here). Several workers must not read the same batches in the
  # same order (each batch would be applied once per worker at about the
  # same time): their shuffle is left unseeded, as in the seed program.
  workers = len(cluster["worker"])
  input_config = seed_model.config() if workers == 1 else (
      estimator_compat.RunConfig())
  dataset_fn = adapters.input_fn_to_dataset_fn(
      seed_model.train_input_fn(), ModeKeys.TRAIN, config=input_config)
  with strategy.scope():
    module = adapters.ModelFnModule(seed_model.model_fn(),
                                    config=seed_model.config())
    module.build(*dataset_fn().element_spec)
  iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))

  @tf.function
  def train_step(iterator):
    features, labels = next(iterator)
    return strategy.run(module.train_step, args=(features, labels))

  for _ in range(steps):
    coordinator.schedule(train_step, args=(iterator,))
  coordinator.join()
  return seed_model.module_accuracy(module)


def main(steps: int = seed_model.STEPS, workers: int = 1) -> float:
  cluster = cluster_tasks.loopback_cluster(workers=workers, ps=1)
  servers = start_servers(cluster)
  try:
    return train(cluster, steps)
  finally:
    for server in servers:
      server.kill()
      server.wait()


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == _SERVE:
    serve(json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
          int(sys.argv[5]))
  else:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--steps", type=int, default=seed_model.STEPS)
    args = parser.parse_args()
    print(f"accuracy {main(args.steps, args.workers):.3f}")
