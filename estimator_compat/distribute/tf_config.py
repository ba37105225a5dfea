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
  """The TF_CONFIG environment variable as a dict ({} when unset).

  Raises:
    ValueError: it is not a JSON object.
  """
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


_LOCAL_MASTER = ""
_SESSION_MASTER = "session_master"
_EVAL_SESSION_MASTER = "eval_session_master"
_NOTE = ("\n\nNote that these values may be coming from the TF_CONFIG "
         "environment variable.")
_EXAMPLE = ('{"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"]}, '
            '"task": {"type": "worker", "index": 0}}')


def _fail(message: str, fix: str) -> None:
  raise ValueError(f"{message} Fix: {fix}")


class ClusterInfo:
  """What TF_CONFIG says about this process, by the Estimator's rules.

  Attributes (the RunConfig properties of the same names): cluster_spec,
  task_type, task_id, master, evaluation_master, is_chief, num_ps_replicas,
  num_worker_replicas, global_id_in_cluster, service; and has_cluster (TF_CONFIG
  names a cluster, also on an evaluator, whose cluster_spec is empty).

  Raises:
    ValueError: the cluster or task is inconsistent (the Estimator's wording,
      then the fix).
    TypeError: `service` is not a JSON object.
  """

  def __init__(self, tf_config: Mapping[str, Any],
               first_worker_chief: bool = False):
    self._first_worker_chief = first_worker_chief
    service = tf_config.get("service")
    if service is not None and not isinstance(service, dict):
      raise TypeError(
          f'If "service" is set in TF_CONFIG, it must be a dict. Given '
          f"{type(service)}. Fix: make TF_CONFIG's \"service\" a JSON object "
          "or remove it.")
    self.service = service
    cluster = tf_config.get("cluster") or {}
    task = tf_config.get("task") or {}
    if not isinstance(cluster, dict) or not isinstance(task, dict):
      _fail("TF_CONFIG 'cluster' and 'task' must be JSON objects.",
            f"use the form {_EXAMPLE}.")
    self.cluster_spec = tf.train.ClusterSpec(cluster)
    self.has_cluster = bool(cluster)
    if not cluster:
      self._init_local(tf_config, task)
    elif TaskType.MASTER in self.cluster_spec.jobs:
      self._init_with_master_job(tf_config, task)
    else:
      self._init_cluster(tf_config, task, TaskType.CHIEF)

  def _init_local(self, tf_config: Mapping[str, Any],
                  task: Mapping[str, Any]) -> None:
    self.task_type = task.get("type", TaskType.WORKER)
    self.task_id = int(task.get("index", 0))
    if self.task_type != TaskType.WORKER:
      _fail('If "cluster" is not set in TF_CONFIG, task type must be WORKER.',
            "add the cluster this task belongs to, e.g. "
            f"{_EXAMPLE}, or remove 'task' to train in this process.")
    if self.task_id != 0:
      _fail('If "cluster" is not set in TF_CONFIG, task index must be 0.',
            "add the cluster this task belongs to, or set the index to 0.")
    self.master = tf_config.get(_SESSION_MASTER, _LOCAL_MASTER)
    self.evaluation_master = tf_config.get(_EVAL_SESSION_MASTER, _LOCAL_MASTER)
    self.is_chief = True
    self.num_ps_replicas = 0
    self.num_worker_replicas = 1
    self.global_id_in_cluster = 0

  def _init_with_master_job(self, tf_config: Mapping[str, Any],
                            task: Mapping[str, Any]) -> None:
    if TaskType.CHIEF in self.cluster_spec.jobs:
      _fail("If `master` node exists in `cluster`, job `chief` is not "
            "supported.", "name the chief task either 'master' (legacy) or "
            "'chief', not both.")
    self._init_cluster(tf_config, task, TaskType.MASTER)
    if self.task_type == TaskType.EVALUATOR:
      _fail("If `master` node exists in `cluster`, task_type `evaluator` is "
            "not supported.", "rename the 'master' job to 'chief'.")

  def _init_cluster(self, tf_config: Mapping[str, Any],
                    task: Mapping[str, Any], chief_type: str) -> None:
    spec = self.cluster_spec
    # With train_distribute the Estimator's distribute coordinator ran a
    # cluster without a chief job: worker 0 was the chief.
    no_chief = self._first_worker_chief and chief_type not in spec.jobs
    self.task_type, self.task_id = _checked_task(spec, task, chief_type,
                                                 chief_required=not no_chief)
    self.evaluation_master = _LOCAL_MASTER
    self.is_chief = self.task_type == chief_type or (
        no_chief and self.task_type == TaskType.WORKER and self.task_id == 0)
    if self.task_type == TaskType.EVALUATOR:
      # The evaluator is not a member of the training cluster.
      self.evaluation_master = tf_config.get(_EVAL_SESSION_MASTER,
                                             _LOCAL_MASTER)
      self.cluster_spec = tf.train.ClusterSpec({})
      self.master = _LOCAL_MASTER
      self.num_ps_replicas = self.num_worker_replicas = 0
      self.global_id_in_cluster = None
      return
    if _SESSION_MASTER in tf_config:
      self.master = tf_config[_SESSION_MASTER]
    elif len(spec.jobs) == 1 and spec.num_tasks(spec.jobs[0]) == 1:
      self.master = _LOCAL_MASTER  # One node: no RPC to itself.
    else:
      self.master = "grpc://" + spec.task_address(self.task_type, self.task_id)
    jobs = spec.as_dict()
    self.num_ps_replicas = len(jobs.get(TaskType.PS, []))
    self.num_worker_replicas = (len(jobs.get(TaskType.WORKER, [])) +
                                len(jobs.get(chief_type, [])))
    # Chief first, then the other jobs by name, parameter servers last.
    order = [chief_type] if chief_type in jobs else []
    order += [job for job in sorted(spec.jobs)
              if job not in (chief_type, TaskType.PS)]
    order += [TaskType.PS] if TaskType.PS in jobs else []
    offset = 0
    for job in order:
      if job == self.task_type:
        break
      offset += spec.num_tasks(job)
    self.global_id_in_cluster = offset + self.task_id


def _checked_task(spec: tf.train.ClusterSpec, task: Mapping[str, Any],
                  chief_type: str, chief_required: bool = True):
  """(task_type, task_id) of a cluster member, checked against the cluster."""
  if chief_required and chief_type not in spec.jobs:
    _fail(f'If "cluster" is set in TF_CONFIG, it must have one "{chief_type}" '
          "node.", f'add "{chief_type}": ["host:port"] to the cluster (the '
          "task that writes checkpoints and summaries), e.g. "
          f"{_EXAMPLE}.")
  if chief_type in spec.jobs and spec.num_tasks(chief_type) > 1:
    _fail(f'The "cluster" in TF_CONFIG must have only one "{chief_type}" '
          "node.", f"keep one address under \"{chief_type}\" and move the "
          "others to \"worker\".")
  task_type = task.get("type")
  task_id = task.get("index")
  if not task_type:
    _fail('If "cluster" is set in TF_CONFIG, task type must be set.',
          'set "task": {"type": "worker", "index": 0} for this process.')
  if task_id is None:
    _fail('If "cluster" is set in TF_CONFIG, task index must be set.',
          f'set "task": {{"type": "{task_type}", "index": 0}} for this '
          "process.")
  task_id = int(task_id)
  if task_id < 0:
    _fail("Task index must be non-negative number.",
          "use the task's position in its job, from 0.")
  if task_type == TaskType.EVALUATOR:
    return task_type, task_id
  if task_type not in spec.jobs:
    _fail(f"{task_type} is not a valid task_type in the cluster_spec:\n"
          f"{spec}{_NOTE}", f"use one of {sorted(spec.jobs)}, or add the job.")
  if not 0 <= task_id < spec.num_tasks(task_type):
    _fail(f"{task_id} is not a valid task_id for task_type {task_type} in the "
          f"cluster_spec:\n{spec}{_NOTE}",
          f"job {task_type!r} has {spec.num_tasks(task_type)} task(s): use an "
          f"index from 0 to {spec.num_tasks(task_type) - 1}.")
  return task_type, task_id
