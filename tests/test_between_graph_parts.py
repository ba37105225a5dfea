"""The graph engine's between-graph pieces in-process (graph_between.py).

tests/test_cluster.py trains such clusters in subprocesses; here each piece
runs with a TF_CONFIG and a real RunConfig: the device function, the
server's settings and the workers' start delay.
"""

import json

import pytest
import tensorflow as tf

import estimator_compat
from estimator_compat.distribute import strategies
from estimator_compat.engines import graph_between

CLUSTER = {"chief": ["localhost:2220"], "worker": ["localhost:2221",
                                                  "localhost:2222"],
           "ps": ["localhost:2223", "localhost:2224"]}


def _config(monkeypatch, task_type, task_id, cluster=None, **kwargs):
  monkeypatch.setenv("TF_CONFIG", json.dumps({
      "cluster": cluster or CLUSTER,
      "task": {"type": task_type, "index": task_id}}))
  return estimator_compat.RunConfig(**kwargs)


def test_variables_go_to_the_ps_tasks_and_ops_stay_on_the_worker(
    monkeypatch):
  place = graph_between.device_fn(_config(monkeypatch, "worker", 1))
  with tf.Graph().as_default():
    with tf.compat.v1.device(place):
      first = tf.compat.v1.get_variable("first", [2])
      second = tf.compat.v1.get_variable("second", [2])
      total = tf.add(first, second)
  assert {first.device, second.device} == {"/job:ps/task:0",
                                           "/job:ps/task:1"}
  assert total.device == "/job:worker/task:1"


def test_runconfig_device_fn_wins_and_no_ps_means_none(monkeypatch):
  def mine(op):
    del op
    return "/cpu:0"
  assert graph_between.device_fn(
      _config(monkeypatch, "worker", 0, device_fn=mine)) is mine
  no_ps = {"chief": ["localhost:2220"], "worker": ["localhost:2221"]}
  assert graph_between.device_fn(
      _config(monkeypatch, "worker", 0, cluster=no_ps)) is None


def test_server_of_the_task_with_inter_op_threads_and_gpu_options(
    monkeypatch):
  made = []

  class Server:
    target = "grpc://localhost:2221"

    def __init__(self, cluster_spec, **kwargs):
      made.append((cluster_spec, kwargs))

  monkeypatch.setattr(tf.distribute, "Server", Server)
  monkeypatch.setattr(graph_between, "_servers", [])
  session_config = tf.compat.v1.ConfigProto()
  session_config.gpu_options.allow_growth = True
  config = _config(monkeypatch, "worker", 0, session_config=session_config)
  server = graph_between.start_server(config)
  assert graph_between._servers == [server]  # kept for the process
  (cluster_spec, kwargs), = made
  assert cluster_spec.as_dict() == CLUSTER
  assert (kwargs["job_name"], kwargs["task_index"], kwargs["protocol"],
          kwargs["start"]) == ("worker", 0, "grpc", True)
  assert (kwargs["config"].inter_op_parallelism_threads ==
          strategies.PS_WORKER_INTER_OP_THREADS)
  assert kwargs["config"].gpu_options.allow_growth
  chief = _config(monkeypatch, "chief", 0, protocol="grpc+verbs")
  graph_between.start_server(chief)
  assert made[1][1]["protocol"] == "grpc+verbs"
  assert not made[1][1]["config"].gpu_options.allow_growth


@pytest.mark.parametrize("task_type, task_id, limit, slept", [
    ("worker", 0, None, [5]),
    ("worker", 1, None, [10]),
    ("worker", 1, 7, [7]),
    ("worker", 1, 0, []),
    ("chief", 0, None, []),
])
def test_worker_n_waits_n_plus_one_times_five_seconds(
    monkeypatch, task_type, task_id, limit, slept):
  sleeps = []
  monkeypatch.setattr(graph_between.time, "sleep", sleeps.append)
  graph_between.delay_worker(_config(
      monkeypatch, task_type, task_id,
      experimental_max_worker_delay_secs=limit))
  assert sleeps == slept


def test_the_delay_is_at_most_a_minute(monkeypatch):
  sleeps = []
  monkeypatch.setattr(graph_between.time, "sleep", sleeps.append)
  many = dict(CLUSTER, worker=[f"localhost:{3000 + i}" for i in range(20)])
  graph_between.delay_worker(_config(monkeypatch, "worker", 19,
                                     cluster=many))
  assert sleeps == [60]
