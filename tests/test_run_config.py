"""RunConfig: legacy defaults and TF_CONFIG parsing."""

import json
import re

import pytest
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

import estimator_compat as tfe


def _set_tf_config(monkeypatch, value):
  monkeypatch.setenv("TF_CONFIG", value if isinstance(value, str) else
                     json.dumps(value))


def test_legacy_defaults():
  config = tfe.RunConfig()
  assert config.model_dir is None
  assert config.tf_random_seed is None
  assert config.save_summary_steps == 100
  assert config.save_checkpoints_secs == 600
  assert config.save_checkpoints_steps is None
  assert config.keep_checkpoint_max == 5
  assert config.keep_checkpoint_every_n_hours == 10000
  assert config.log_step_count_steps == 100
  assert config.train_distribute is None and config.eval_distribute is None
  assert config.session_creation_timeout_secs == 7200
  assert config.checkpoint_save_graph_def is True
  assert config.session_config is None  # The Estimator fills it in.
  assert (config.task_type, config.task_id, config.is_chief) == ("worker", 0,
                                                                 True)
  assert config.master == "" and config.evaluation_master == ""
  assert (config.num_ps_replicas, config.num_worker_replicas) == (0, 1)
  assert config.cluster_spec.as_dict() == {}


def test_save_checkpoints_steps_turns_off_secs():
  config = tfe.RunConfig(save_checkpoints_steps=7)
  assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (7,
                                                                          None)


def test_both_save_settings_rejected():
  with pytest.raises(ValueError, match="cannot be both set.*Fix"):
    tfe.RunConfig(save_checkpoints_steps=5, save_checkpoints_secs=5)


def test_replace_keeps_other_fields_and_rejects_unknown():
  config = tfe.RunConfig(tf_random_seed=3).replace(model_dir="/tmp/x",
                                                   save_checkpoints_steps=9)
  assert config.model_dir == "/tmp/x"
  assert config.tf_random_seed == 3
  assert config.save_checkpoints_secs is None
  with pytest.raises(ValueError,
                     match="Replacing not_a_field is not supported.*Fix"):
    config.replace(not_a_field=1)


def test_tf_config_chief_worker_ps(monkeypatch):
  cluster = {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"], "ps": ["h3:1"]}
  _set_tf_config(monkeypatch, {"cluster": cluster,
                               "task": {"type": "worker", "index": 1}})
  config = tfe.RunConfig()
  assert config.cluster_spec.as_dict() == cluster
  assert (config.task_type, config.task_id) == ("worker", 1)
  assert not config.is_chief
  assert config.master == "grpc://h2:1"
  assert config.num_ps_replicas == 1
  assert config.num_worker_replicas == 3
  assert config.global_id_in_cluster == 2
  _set_tf_config(monkeypatch, {"cluster": cluster,
                               "task": {"type": "chief", "index": 0}})
  chief = tfe.RunConfig()
  assert chief.is_chief and chief.master == "grpc://h0:1"
  assert chief.global_id_in_cluster == 0


def test_tf_config_evaluator(monkeypatch):
  _set_tf_config(monkeypatch, {"cluster": {"chief": ["h0:1"]},
                               "task": {"type": "evaluator", "index": 2},
                               "eval_session_master": "grpc://e:1"})
  config = tfe.RunConfig()
  assert (config.task_type, config.task_id) == ("evaluator", 2)
  assert not config.is_chief
  assert config.master == ""
  assert config.evaluation_master == "grpc://e:1"
  assert (config.num_ps_replicas, config.num_worker_replicas) == (0, 0)
  # Not a member of the training cluster, as in the Estimator.
  assert config.cluster_spec.as_dict() == {}
  assert config.global_id_in_cluster is None
  assert config.session_config is None
  assert config.is_distributed


def test_tf_config_model_dir(monkeypatch, tmp_path):
  _set_tf_config(monkeypatch, {"model_dir": str(tmp_path)})
  assert tfe.RunConfig().model_dir == str(tmp_path)
  with pytest.raises(ValueError, match="(?s)must have the same value as the "
                     "model_dir in TF_CONFIG.*Fix"):
    tfe.RunConfig(model_dir=str(tmp_path / "other"))


# The values below are what the real RunConfig (TF 2.15) gives for the same
# TF_CONFIG and arguments.


def test_one_node_cluster_has_local_master(monkeypatch):
  _set_tf_config(monkeypatch, {"cluster": {"chief": ["h0:1"]},
                               "task": {"type": "chief", "index": 0}})
  config = tfe.RunConfig()
  assert config.master == ""
  assert config.is_chief and config.num_worker_replicas == 1


def test_session_master_keys(monkeypatch):
  cluster = {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"], "ps": ["h3:1"]}
  _set_tf_config(monkeypatch, {"cluster": cluster,
                               "task": {"type": "worker", "index": 1},
                               "session_master": "grpc://m:1",
                               "eval_session_master": "grpc://e:1"})
  config = tfe.RunConfig()
  assert config.master == "grpc://m:1"
  assert config.evaluation_master == ""  # Only an evaluator reads it.
  _set_tf_config(monkeypatch, {"session_master": "grpc://m:1",
                               "eval_session_master": "grpc://e:1"})
  local = tfe.RunConfig()
  assert (local.master, local.evaluation_master) == ("grpc://m:1",
                                                     "grpc://e:1")


def test_legacy_master_job_and_global_ids(monkeypatch):
  _set_tf_config(monkeypatch, {
      "cluster": {"master": ["h0:1"], "worker": ["h1:1"], "ps": ["h2:1"]},
      "task": {"type": "master", "index": 0}})
  config = tfe.RunConfig()
  assert config.is_chief and config.master == "grpc://h0:1"
  assert (config.num_ps_replicas, config.num_worker_replicas) == (1, 2)
  # Chief first, then other jobs by name, ps last.
  _set_tf_config(monkeypatch, {
      "cluster": {"chief": ["h0:1"], "aaa": ["h4:1"], "worker": ["h1:1"],
                  "ps": ["h3:1"]},
      "task": {"type": "worker", "index": 0}})
  assert tfe.RunConfig().global_id_in_cluster == 2


def test_distributed_default_session_config(monkeypatch):
  cluster = {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"], "ps": ["h3:1"]}
  _set_tf_config(monkeypatch, {"cluster": cluster,
                               "task": {"type": "worker", "index": 1}})
  config = tfe.RunConfig()
  assert list(config.session_config.device_filters) == [
      "/job:ps", "/job:worker/task:1"]
  assert config.session_config.allow_soft_placement
  mine = tf.compat.v1.ConfigProto(log_device_placement=True)
  assert tfe.RunConfig(session_config=mine).session_config is mine
  _set_tf_config(monkeypatch, {"cluster": cluster,
                               "task": {"type": "ps", "index": 0}})
  assert list(tfe.RunConfig().session_config.device_filters) == [
      "/job:ps", "/job:worker", "/job:chief", "/job:master"]


@pytest.mark.parametrize("tf_config,message", [
    ({"cluster": {"worker": ["h1:1"]}, "task": {"type": "worker", "index": 0}},
     'it must have one "chief" node'),
    ({"cluster": {"chief": ["h0:1", "h1:1"]},
      "task": {"type": "chief", "index": 0}},
     'must have only one "chief" node'),
    ({"cluster": {"chief": ["h0:1"]}, "task": {"index": 0}},
     "task type must be set"),
    ({"cluster": {"chief": ["h0:1"]}, "task": {"type": "chief"}},
     "task index must be set"),
    ({"cluster": {"chief": ["h0:1"]}, "task": {"type": "chief", "index": -1}},
     "Task index must be non-negative number"),
    ({"cluster": {"chief": ["h0:1"]}, "task": {"type": "foo", "index": 0}},
     "foo is not a valid task_type in the cluster_spec"),
    ({"cluster": {"chief": ["h0:1"]}, "task": {"type": "chief", "index": 4}},
     "4 is not a valid task_id for task_type chief"),
    ({"task": {"type": "ps", "index": 0}},
     'If "cluster" is not set in TF_CONFIG, task type must be WORKER'),
    ({"task": {"type": "evaluator", "index": 0}},
     'If "cluster" is not set in TF_CONFIG, task type must be WORKER'),
    ({"task": {"type": "worker", "index": 1}},
     'If "cluster" is not set in TF_CONFIG, task index must be 0'),
    ({"cluster": {"master": ["h0:1"], "chief": ["h1:1"]},
      "task": {"type": "master", "index": 0}},
     "If `master` node exists in `cluster`, job `chief` is not supported"),
    ({"cluster": {"master": ["h0:1"]},
      "task": {"type": "evaluator", "index": 0}},
     "task_type `evaluator` is not supported"),
    ({"model_dir": ""}, "model_dir in TF_CONFIG should be non-empty"),
])
def test_tf_config_rejected_as_by_the_estimator(monkeypatch, tf_config,
                                                message):
  _set_tf_config(monkeypatch, tf_config)
  with pytest.raises(ValueError, match="(?s)" + re.escape(message) + ".*Fix: "):
    tfe.RunConfig()


def test_service_must_be_an_object(monkeypatch):
  _set_tf_config(monkeypatch, {"service": "x"})
  with pytest.raises(TypeError, match='"service" is set in TF_CONFIG, it '
                     "must be a dict.*Fix"):
    tfe.RunConfig()
  _set_tf_config(monkeypatch, {"service": {"a": 1}})
  assert tfe.RunConfig().service == {"a": 1}


@pytest.mark.parametrize("kwargs,message", [
    ({"model_dir": ""}, "model_dir should be non-empty"),
    ({"save_summary_steps": -1}, "save_summary_steps should be >= 0"),
    ({"save_checkpoints_steps": -1}, "save_checkpoints_steps should be >= 0"),
    ({"save_checkpoints_secs": -1}, "save_checkpoints_secs should be >= 0"),
    ({"session_config": {}}, "session_config must be instance of ConfigProto"),
    ({"keep_checkpoint_max": -1}, "keep_checkpoint_max should be >= 0"),
    ({"keep_checkpoint_every_n_hours": 0},
     "keep_checkpoint_every_n_hours should be > 0"),
    ({"log_step_count_steps": 0}, "log_step_count_steps should be > 0"),
    ({"tf_random_seed": 1.5}, "tf_random_seed must be integer."),
    ({"experimental_max_worker_delay_secs": 1.5},
     "experimental_max_worker_delay_secs must be an integer if set."),
    ({"session_creation_timeout_secs": 0},
     "session_creation_timeout_secs should be > 0"),
    ({"device_fn": lambda x: x},
     'device_fn must be callable with exactly one argument "op".'),
    ({"protocol": "http"}, "protocol should be grpc or grpc+verbs"),
])
def test_fields_rejected_as_by_the_estimator(kwargs, message):
  with pytest.raises(ValueError, match=re.escape(message) + ".*Fix: "):
    tfe.RunConfig(**kwargs)
  name, value = next(iter(kwargs.items()))
  with pytest.raises(ValueError, match=re.escape(message)):
    tfe.RunConfig().replace(**{name: value})


def test_no_checkpoints_and_pathlike_model_dir(tmp_path):
  config = tfe.RunConfig(save_checkpoints_steps=None,
                         save_checkpoints_secs=None, model_dir=tmp_path)
  assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (
      None, None)
  assert config.model_dir == str(tmp_path)


def test_replace_save_settings_and_tf_config(monkeypatch):
  config = tfe.RunConfig(save_checkpoints_steps=5)
  by_secs = config.replace(save_checkpoints_secs=7)
  assert (by_secs.save_checkpoints_steps, by_secs.save_checkpoints_secs) == (
      None, 7)
  off = config.replace(save_checkpoints_steps=None, save_checkpoints_secs=None)
  assert (off.save_checkpoints_steps, off.save_checkpoints_secs) == (None,
                                                                      None)
  with pytest.raises(ValueError, match="cannot be both set"):
    config.replace(save_checkpoints_steps=3, save_checkpoints_secs=7)
  with pytest.raises(ValueError, match="Replacing task_type is not supported"):
    config.replace(task_type="ps")
  # TF_CONFIG is read when the config is built, not again by replace().
  _set_tf_config(monkeypatch, {
      "cluster": {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"]},
      "task": {"type": "worker", "index": 1}})
  worker = tfe.RunConfig()
  monkeypatch.delenv("TF_CONFIG")
  copied = worker.replace(model_dir="/tmp/y")
  assert (copied.task_type, copied.task_id, copied.master) == (
      "worker", 1, "grpc://h2:1")
  # Our own fields are replaceable too.
  assert config.replace(engine="graph", steps_per_loop=4).steps_per_loop == 4


class _MyConfig(tfe.RunConfig):
  """A subclass that overrides properties, as some programs did."""

  @property
  def is_chief(self):
    return False

  @property
  def tf_random_seed(self):
    return 42


def test_subclass_survives_replace_and_estimator(tmp_path):
  copied = _MyConfig().replace(model_dir=str(tmp_path))
  assert type(copied) is _MyConfig
  assert (copied.is_chief, copied.tf_random_seed) == (False, 42)

  def model_fn(features, labels, mode):
    del features, labels, mode

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path / "m"),
                      config=_MyConfig())
  assert type(est.config) is _MyConfig
  assert (est.config.is_chief, est.config.tf_random_seed) == (False, 42)
  assert est.config.model_dir == str(tmp_path / "m")


def test_estimator_fills_in_the_default_session_config(tmp_path):
  def model_fn(features, labels, mode):
    del features, labels, mode

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  session_config = est.config.session_config
  assert session_config.allow_soft_placement
  rewrite = session_config.graph_options.rewrite_options
  assert rewrite.meta_optimizer_iterations == (
      rewriter_config_pb2.RewriterConfig.ONE)
  mine = tf.compat.v1.ConfigProto(log_device_placement=True)
  est = tfe.Estimator(model_fn, model_dir=str(tmp_path),
                      config=tfe.RunConfig(session_config=mine))
  assert est.config.session_config.log_device_placement


def test_experimental_distribute_sets_the_strategies_once():
  # As the Estimator: DistributeConfig's strategies become train_distribute /
  # eval_distribute, and setting one both ways is refused.
  from tensorflow.python.distribute.distribute_config import DistributeConfig  # pylint: disable=g-import-not-at-top,g-direct-tensorflow-import
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  config = tfe.RunConfig(experimental_distribute=DistributeConfig(
      train_distribute=strategy, eval_distribute=strategy))
  assert config.train_distribute is strategy
  assert config.eval_distribute is strategy
  for name in ("train_distribute", "eval_distribute"):
    with pytest.raises(ValueError, match=(
        rf"Either `{name}` or`experimental_distribute.{name}` can be set. "
        rf"Fix: pass the strategy once")):
      tfe.RunConfig(**{name: strategy}, experimental_distribute=(
          DistributeConfig(**{name: strategy})))


def test_a_strategy_with_a_taskless_cluster_is_refused_at_train(
    monkeypatch, tmp_path):
  # The Estimator's RunConfig kept such a cluster with the local values and
  # its train() refused it; without a strategy the RunConfig refuses it.
  monkeypatch.setenv("TF_CONFIG", json.dumps(
      {"cluster": {"chief": ["localhost:2222"]}}))
  with pytest.raises(ValueError, match="task type must be set"):
    tfe.RunConfig()
  config = tfe.RunConfig(model_dir=str(tmp_path / "model"),
                         train_distribute=tf.distribute.OneDeviceStrategy(
                             "/cpu:0"))
  assert (config.task_type, config.task_id, config.is_chief) == (
      "worker", 0, True)
  assert config.cluster_spec.as_dict() == {"chief": ["localhost:2222"]}

  def model_fn(features, labels, mode):
    del features, labels
    return tfe.EstimatorSpec(mode, loss=tf.constant(0.0),
                             train_op=tf.no_op())

  est = tfe.Estimator(model_fn, config=config)
  with pytest.raises(ValueError, match=(
      r"Only `STANDALONE_CLIENT` mode is supported when you call "
      r"`estimator.train`. Fix: TF_CONFIG names a cluster but no task")):
    est.train(lambda: ({"x": tf.constant([1.0])}, None), steps=1)
  assert not (tmp_path / "model").exists() or not list(
      (tmp_path / "model").iterdir())
