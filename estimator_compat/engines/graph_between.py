"""The graph engine's between-graph replication, as the Estimator ran it.

A TF_CONFIG cluster with ps tasks and no strategy, on the graph engine: the
chief and each worker build their own training graph with the variables on
the ps tasks (`tf.compat.v1.train.replica_device_setter`, the Estimator's
default device_fn), and train asynchronously through their own standard
server (`MonitoredTrainingSession(master=..., is_chief=...)`); the chief
initializes, saves checkpoints and writes summaries. `train_and_evaluate`
starts each task's server (`start_server`) and delays workers as the
Estimator's training executor did; ps tasks only serve (cluster_tasks.py).
"""

import time
from typing import Any, Callable, Optional

import tensorflow as tf

# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.training import device_setter

from estimator_compat.distribute import strategies
from estimator_compat.front import tf_logging as logging

_DELAY_SECS_PER_WORKER = 5  # The Estimator's: worker N waits (N + 1) * 5 s,
_MAX_DELAY_SECS = 60  # at most this (RunConfig can lower it).


def device_fn(config: Any) -> Optional[Callable[..., Any]]:
  """The train graph's device function: RunConfig's, else the Estimator's
  replica_device_setter over the ps tasks (None without ps tasks)."""
  if config.device_fn is not None:
    return config.device_fn
  if not config.num_ps_replicas:
    return None
  worker_device = (f"/job:{config.task_type}/task:{config.task_id}"
                   if config.task_type else "/job:worker")
  return tf.compat.v1.train.replica_device_setter(
      ps_tasks=config.num_ps_replicas, worker_device=worker_device,
      merge_devices=True, ps_ops=list(device_setter.STANDARD_PS_OPS),
      cluster=config.cluster_spec)


def start_server(config: Any) -> tf.distribute.Server:
  """Starts this chief's or worker's standard server (kept for the process).

  Its inter-op pool has at least strategies.PS_WORKER_INTER_OP_THREADS
  threads: with fewer, a step's cross-task receives can wait on each other
  on a small machine (the Estimator took TensorFlow's default).
  """
  server_config = tf.compat.v1.ConfigProto(
      log_device_placement=False,
      inter_op_parallelism_threads=strategies.PS_WORKER_INTER_OP_THREADS)
  if config.session_config is not None:
    server_config.gpu_options.CopyFrom(config.session_config.gpu_options)
  server = tf.distribute.Server(
      config.cluster_spec, job_name=config.task_type,
      task_index=config.task_id, config=server_config,
      protocol=config.protocol or "grpc", start=True)
  _servers.append(server)
  logging.info("Started the %s %d server at %s.", config.task_type,
               config.task_id, server.target)
  return server


_servers = []


def delay_worker(config: Any) -> None:
  """Worker N waits before training, as the Estimator's executor made it."""
  if config.task_type != "worker":
    return
  limit = _MAX_DELAY_SECS
  if config.experimental_max_worker_delay_secs is not None:
    limit = int(config.experimental_max_worker_delay_secs)
  delay = min(limit, (config.task_id + 1) * _DELAY_SECS_PER_WORKER)
  if delay > 0:
    logging.info("Waiting %d secs before starting training.", delay)
    time.sleep(delay)
