"""`tf.compat.v1.estimator.tpu` configuration: TPUConfig and its RunConfig.

Every field of the real classes is accepted and validated by the same
rules, so a TPU program's configuration runs unchanged; on CPU/GPU
(`TPUEstimator(use_tpu=False)`) most TPU fields have nothing to do.
`iterations_per_loop` is validated and kept; it does not set how many
steps run per call. Without a TPU the real TPUEstimator ran one step per
session call, so every hook saw every step; here the default automatic
steps per call (`steps_per_loop=None`) batches only the steps no hook
observes, which gives the same results and hook calls.
"""

import collections
import json
import os
import re
from typing import Any, NamedTuple, Optional

import numpy as np
import tensorflow as tf

from estimator_compat import run_config as run_config_lib

_ITERATIONS = re.compile(r"^([1-9]\d*)([smh])?$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


class IterationsPerLoop(NamedTuple):
  """A parsed `iterations_per_loop`: a step count or a duration."""
  value: int
  unit: str  # "count" or "seconds"


def parse_iterations_per_loop(value: Any) -> IterationsPerLoop:
  """Parses `iterations_per_loop`: a positive int, or 'Ns' / 'Nm' / 'Nh'
  (no leading zeros, as the real TPUConfig).

  Raises:
    ValueError: anything else, in the real TPUConfig's words.
  """
  match = _ITERATIONS.match(str(value))
  if isinstance(value, bool) or match is None or int(match.group(1)) <= 0:
    raise ValueError(
        "Invalid TPUConfig `iterations_per_loop` value. Value must be "
        "positive integer value or time-based value `<N><s|m|h>` where <N> "
        "is any positive integer and `s`, `m`, `h` are unit of time in "
        f"seconds, minutes, hours respectively. Got {value!r}. Fix: e.g. "
        "100, '3600s', '60m' or '1h'.")
  if match.group(2) is None:
    return IterationsPerLoop(int(match.group(1)), "count")
  return IterationsPerLoop(int(match.group(1)) * _UNIT_SECONDS[match.group(2)],
                           "seconds")


def check_positive_integer(value: Any, name: str) -> None:
  """Raises unless `value` is an integer > 0.

  Raises:
    TypeError: not an integer.
    ValueError: not positive.
  """
  if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
    raise TypeError(f"{name} must be int, got {type(value)}")
  if value <= 0:
    raise ValueError(f"{name} must be positive, got {value}")


class InputPipelineConfig:
  """How a TPU input pipeline was deployed (constants only)."""
  PER_SHARD_V1 = 1
  PER_HOST_V1 = 2
  PER_HOST_V2 = 3
  BROADCAST = 4
  SLICED = 5


_TPU_FIELDS = (
    "iterations_per_loop", "num_shards", "num_cores_per_replica",
    "per_host_input_for_training", "tpu_job_name", "initial_infeed_sleep_secs",
    "input_partition_dims", "eval_training_input_configuration",
    "experimental_host_call_every_n_steps",
    "experimental_allow_per_host_v2_parallel_get_next",
    "experimental_feed_hook")


def _tpu_job_name_from_tf_config() -> Optional[str]:
  """TF_CONFIG's service.tpu_worker_job_name, as the real TPUConfig read it."""
  tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
  return tf_config.get("service", {}).get("tpu_worker_job_name")


class TPUConfig(collections.namedtuple("TPUConfig", _TPU_FIELDS)):
  """TPU settings of a `tpu.RunConfig`: the real TPUConfig's fields.

  See the module docstring for what `iterations_per_loop` does here; the
  other fields describe TPU hardware and are only validated.
  """

  def __new__(cls,
              iterations_per_loop: Any = 2,
              num_shards: Optional[int] = None,
              num_cores_per_replica: Optional[int] = None,
              per_host_input_for_training: Any = True,
              tpu_job_name: Optional[str] = None,
              initial_infeed_sleep_secs: Optional[int] = None,
              input_partition_dims: Any = None,
              eval_training_input_configuration: int = (
                  InputPipelineConfig.PER_HOST_V1),
              experimental_host_call_every_n_steps: int = 1,
              experimental_allow_per_host_v2_parallel_get_next: bool = False,
              experimental_feed_hook: Any = None) -> "TPUConfig":
    """Validates the fields as the real TPUConfig did.

    Raises:
      ValueError: an invalid field.
    """
    parse_iterations_per_loop(iterations_per_loop)
    if num_shards is not None:
      check_positive_integer(num_shards, "TPUConfig num_shards")
    if input_partition_dims is not None:
      if len(input_partition_dims) not in (1, 2):
        raise ValueError(
            "input_partition_dims must be a list/tuple with one or two "
            "elements.")
      if per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
        raise ValueError(
            "input_partition_dims is only supported in PER_HOST_V2 mode.")
      if num_cores_per_replica is None:
        raise ValueError(
            "input_partition_dims requires setting num_cores_per_replica.")
    if num_cores_per_replica is not None and num_cores_per_replica not in (
        1, 2, 4, 8, 16, 32, 64, 128):
      raise ValueError(
          "num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got "
          f"{num_cores_per_replica}")
    if eval_training_input_configuration not in (
        InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.SLICED):
      raise ValueError(
          "eval_training_input_configuration must be PER_HOST_V1 or SLICED; "
          f"got {eval_training_input_configuration}")
    if per_host_input_for_training is False:
      per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
    elif per_host_input_for_training is True:
      per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
    if initial_infeed_sleep_secs:
      check_positive_integer(initial_infeed_sleep_secs,
                              "TPUConfig initial_infeed_sleep_secs")
    tpu_job_name = tpu_job_name or _tpu_job_name_from_tf_config()
    return super().__new__(  # type: ignore[call-arg]  # fields from a variable
        cls, iterations_per_loop, num_shards, num_cores_per_replica,
        per_host_input_for_training, tpu_job_name, initial_infeed_sleep_secs,
        input_partition_dims, eval_training_input_configuration,
        experimental_host_call_every_n_steps,
        experimental_allow_per_host_v2_parallel_get_next,
        experimental_feed_hook)


class RunConfig(run_config_lib.RunConfig):
  """A RunConfig with TPU settings: the real `tpu.RunConfig`'s arguments.

  `steps_per_loop` (ours) is the base RunConfig's setting (automatic by
  default); `tpu_config.iterations_per_loop` does not change it (see the
  module docstring).
  """

  def __init__(self,
               tpu_config: Optional[TPUConfig] = None,
               evaluation_master: Optional[str] = None,
               master: Optional[str] = None,
               cluster: Any = None,
               **kwargs: Any):
    """Builds the config.

    Args:
      tpu_config: a TPUConfig (default: TPUConfig()).
      evaluation_master: address of the evaluation master (recorded).
      master: address of the training master (recorded).
      cluster: a ClusterResolver; its master and cluster spec are recorded.
      **kwargs: the base RunConfig's arguments.

    Raises:
      ValueError: both `master` and `cluster`, or a ClusterResolver with a
        session_config that already has a cluster_def.
    """
    tpu_config = tpu_config or TPUConfig()
    super().__init__(**kwargs)
    if kwargs.get("session_config") is None:
      # The real tpu.RunConfig kept no between-graph session config for a
      # cluster (a ClusterResolver's cluster_def is added below instead).
      self._session_config = None
    self._tpu_config = tpu_config
    self._cluster = cluster
    if master is not None:
      if cluster is not None:
        raise ValueError(
            "Both master and cluster are set. Fix: pass only one of them.")
      self._master = master
    elif cluster:
      self._master = cluster.master()
    if evaluation_master is not None:
      self._evaluation_master = evaluation_master
    elif not self._evaluation_master and self.task_type != "evaluator":
      self._evaluation_master = self._master
    if cluster:
      self._set_cluster(cluster)

  def _set_cluster(self, cluster: Any) -> None:
    """Records a ClusterResolver's cluster spec in the session config."""
    self._cluster_spec = cluster.cluster_spec()
    if self._session_config is None:
      self._session_config = tf.compat.v1.ConfigProto(
          allow_soft_placement=True, isolate_session_state=True)
    if self._session_config.HasField("cluster_def"):
      raise ValueError(
          "You cannot provide a ClusterResolver and "
          "session_config.cluster_def. Fix: drop one of them.")
    if self._cluster_spec:
      self._session_config.cluster_def.CopyFrom(
          self._cluster_spec.as_cluster_def())

  tpu_config = property(lambda self: self._tpu_config)
  cluster = property(lambda self: self._cluster)

  def replace(self, **kwargs: Any) -> "RunConfig":
    """A copy with fields replaced; `tpu_config` may be replaced too."""
    tpu_config = kwargs.pop("tpu_config", None)
    new = super().replace(**kwargs)
    if tpu_config is not None:
      new._tpu_config = tpu_config  # pylint: disable=protected-access
    return new
