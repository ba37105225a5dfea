"""A server task's wait for the chief, in-process (distribute/cluster_tasks.py).

tests/test_cluster.py runs whole clusters; here one ps task's wait runs with
a stand-in server: it ends when the chief (and, between graphs, every
worker) marks the run done after the task started, fails with the fix when
the chief process is gone without the mark, and gives up after its timeout.
"""

import json
import os
import subprocess
import sys
import threading
import time

import pytest
import tensorflow as tf

import estimator_compat
from estimator_compat.distribute import cluster_tasks
from estimator_compat.front.configuration import Choices

CLUSTER = {"chief": ["localhost:2230"], "worker": ["localhost:2231"],
           "ps": ["localhost:2232"]}


@pytest.fixture
def ps_config(monkeypatch):
  started = []

  class Server:
    target = "grpc://localhost:2232"

    def __init__(self, cluster_spec, **kwargs):
      started.append((cluster_spec.as_dict(), kwargs["job_name"]))

  monkeypatch.setattr(tf.distribute, "Server", Server)
  monkeypatch.setattr(cluster_tasks, "_POLL_SECS", 0.05)
  monkeypatch.delenv(cluster_tasks.DONE_FILE_ENV, raising=False)
  monkeypatch.delenv(cluster_tasks.CHIEF_PID_ENV, raising=False)
  monkeypatch.setenv("TF_CONFIG", json.dumps(
      {"cluster": CLUSTER, "task": {"type": "ps", "index": 0}}))
  config = estimator_compat.RunConfig()
  config.started = started
  return config


def _mark_later(*marks):
  def mark():
    for model_dir, worker in marks:
      time.sleep(0.2)
      cluster_tasks.mark_done(model_dir, worker)
  thread = threading.Thread(target=mark)
  thread.start()
  return thread


def test_a_ps_serves_until_the_chief_marks_done(ps_config, tmp_path):
  # An old mark from an earlier run does not count.
  cluster_tasks.mark_done(str(tmp_path))
  assert cluster_tasks.done_since(str(tmp_path), 0.0)
  thread = _mark_later((str(tmp_path), None))
  cluster_tasks.serve_until_done(ps_config, Choices(), str(tmp_path),
                                 timeout_secs=30)
  thread.join()
  assert ps_config.started == [(CLUSTER, "ps")]
  assert cluster_tasks.serves_only(ps_config, Choices())


def test_between_graphs_the_ps_waits_for_every_worker(ps_config, tmp_path):
  choices = Choices(engine="graph", engine_chosen=True)
  assert cluster_tasks.serves_only(ps_config, choices)  # a ps serves
  thread = _mark_later((str(tmp_path), None), (str(tmp_path), 0))
  before = time.time()
  cluster_tasks.serve_until_done(ps_config, choices, str(tmp_path),
                                 timeout_secs=30)
  thread.join()
  # It waited for the worker's mark, which came after the chief's.
  assert time.time() - before >= 0.4
  assert cluster_tasks.done_since(str(tmp_path), before)


def test_a_chief_gone_without_its_mark_stops_the_server(ps_config, tmp_path,
                                                        monkeypatch):
  chief = subprocess.Popen([sys.executable, "-c", "pass"])
  chief.wait()
  monkeypatch.setenv(cluster_tasks.CHIEF_PID_ENV, str(chief.pid))
  with pytest.raises(cluster_tasks.ChiefGoneError) as raised:
    cluster_tasks.serve_until_done(ps_config, Choices(), str(tmp_path),
                                   timeout_secs=30)
  assert f"The chief process (pid {chief.pid}) ended without marking" in (
      str(raised.value))
  assert "Fix: read the chief's output" in str(raised.value)


def test_no_mark_in_time_is_a_timeout(ps_config, tmp_path):
  with pytest.raises(TimeoutError, match="did not finish in 0.2 s"):
    cluster_tasks.serve_until_done(ps_config, Choices(), str(tmp_path),
                                   timeout_secs=0.2)


def test_without_a_model_dir_the_task_cannot_watch(ps_config):
  with pytest.raises(ValueError, match="pass the same model_dir to every"):
    cluster_tasks.serve_until_done(ps_config, Choices(), None)
  assert ps_config.started == []  # failed before starting a server


def test_a_mark_that_is_not_a_time_does_not_count(tmp_path):
  (tmp_path / cluster_tasks.DONE_FILE).write_text("not a time")
  assert not cluster_tasks.done_since(str(tmp_path), 0.0)


def test_a_zombie_is_not_alive():
  child = subprocess.Popen([sys.executable, "-c", "pass"])
  deadline = time.time() + 30
  while cluster_tasks.process_alive(child.pid) and time.time() < deadline:
    time.sleep(0.05)  # exited but not reaped: a zombie
  assert not cluster_tasks.process_alive(child.pid)
  child.wait()
  assert not cluster_tasks.process_alive(child.pid)
  assert cluster_tasks.process_alive(os.getpid())
