"""TF_CONFIG: what the environment says about this task's cluster."""

import json
import os
from typing import Any, Mapping

import tensorflow as tf


class TaskType:
  """Task names a TF_CONFIG cluster may hold."""
  MASTER = "master"
  PS = "ps"
  WORKER = "worker"
  CHIEF = "chief"
  EVALUATOR = "evaluator"


def tf_config_from_env() -> dict:
  raw = os.environ.get("TF_CONFIG", "")
  if not raw.strip():
    return {}
  try:
    parsed = json.loads(raw)
  except json.JSONDecodeError as e:
    raise ValueError(
        f"TF_CONFIG is not valid JSON ({e.msg} at position {e.pos}): {raw!r}. "
        "Fix: set it to a JSON object such as "
        '{"cluster": {"chief": ["host:port"], "worker": ["host:port"]}, '
        '"task": {"type": "chief", "index": 0}}, or unset it for local '
        "training.") from None
  if not isinstance(parsed, dict):
    raise ValueError(
        f"TF_CONFIG must be a JSON object, got {type(parsed).__name__}: "
        f"{raw!r}. Fix: use {{\"cluster\": {{...}}, \"task\": {{...}}}}.")
  return parsed


_CHIEF_TYPES = (TaskType.CHIEF, TaskType.MASTER)


class ClusterInfo:
  """What TF_CONFIG says about this process; validated on construction."""

  def __init__(self, tf_config: Mapping[str, Any]):
    cluster = tf_config.get("cluster") or {}
    task = tf_config.get("task") or {}
    if not isinstance(cluster, dict) or not isinstance(task, dict):
      raise ValueError(
          "TF_CONFIG 'cluster' and 'task' must be JSON objects. Fix: "
          '{"cluster": {"chief": ["host:port"]}, "task": {"type": "chief", '
          '"index": 0}}.')
    self.cluster_spec = tf.train.ClusterSpec(cluster)
    self.task_type = task.get("type")
    self.task_id = task.get("index", 0)
    if not isinstance(self.task_id, int) or self.task_id < 0:
      raise ValueError(
          f"TF_CONFIG task index must be a non-negative integer, got "
          f"{self.task_id!r}.")
    self.service = tf_config.get("service")
    self.model_dir = tf_config.get("model_dir")
    if not cluster:
      self._init_local()
    else:
      self._init_distributed(cluster)

  def _init_local(self) -> None:
    if self.task_type not in (None, TaskType.WORKER, TaskType.EVALUATOR):
      raise ValueError(
          f"TF_CONFIG has task type {self.task_type!r} but no 'cluster'. Fix: "
          "add the cluster that task belongs to, or remove 'task'.")
    if self.task_type == TaskType.EVALUATOR:
      self.is_chief, self.num_worker_replicas = False, 0
    else:
      self.task_type, self.task_id = TaskType.WORKER, 0
      self.is_chief, self.num_worker_replicas = True, 1
    self.master = ""
    self.num_ps_replicas = 0
    self.global_id_in_cluster = 0 if self.is_chief else None

  def _init_distributed(self, cluster: Mapping[str, Any]) -> None:
    jobs = {name: list(addrs) for name, addrs in cluster.items()}
    chiefs = sum(len(jobs.get(name, [])) for name in _CHIEF_TYPES)
    if chiefs != 1:
      raise ValueError(
          f"TF_CONFIG cluster must have exactly one 'chief' task, it has "
          f"{chiefs}: {jobs}. Fix: add \"chief\": [\"host:port\"] to the "
          "cluster (one worker acts as chief, writes checkpoints and "
          "summaries).")
    if self.task_type is None:
      raise ValueError(
          "TF_CONFIG has a 'cluster' but no task type. Fix: set "
          '"task": {"type": "worker", "index": 0} for this process.')
    if self.task_type == TaskType.EVALUATOR:
      if self.task_id != 0:
        raise ValueError(
            f"TF_CONFIG evaluator task index must be 0, got {self.task_id}.")
      self.master, self.is_chief = "", False
      self.num_ps_replicas = self.num_worker_replicas = 0
      self.global_id_in_cluster = None
      return
    if self.task_type not in jobs:
      raise ValueError(
          f"TF_CONFIG task type {self.task_type!r} is not in the cluster "
          f"{sorted(jobs)}. Fix: use one of those job names, or add the job.")
    if self.task_id >= len(jobs[self.task_type]):
      raise ValueError(
          f"TF_CONFIG task index {self.task_id} is out of range: job "
          f"{self.task_type!r} has {len(jobs[self.task_type])} task(s), so "
          f"the index must be 0..{len(jobs[self.task_type]) - 1}.")
    self.master = "grpc://" + jobs[self.task_type][self.task_id]
    self.is_chief = self.task_type in _CHIEF_TYPES
    self.num_ps_replicas = len(jobs.get(TaskType.PS, []))
    self.num_worker_replicas = chiefs + len(jobs.get(TaskType.WORKER, []))
    order = [TaskType.CHIEF, TaskType.MASTER, TaskType.WORKER, TaskType.PS]
    offset = 0
    for name in order:
      if name == self.task_type:
        break
      offset += len(jobs.get(name, []))
    self.global_id_in_cluster = offset + self.task_id
