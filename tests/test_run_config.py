"""RunConfig: legacy defaults and TF_CONFIG parsing."""

import json

import pytest

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
  assert config.session_config.allow_soft_placement
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
  with pytest.raises(ValueError, match="cannot both be set"):
    tfe.RunConfig(save_checkpoints_steps=5, save_checkpoints_secs=5)


def test_replace_keeps_other_fields_and_rejects_unknown():
  config = tfe.RunConfig(tf_random_seed=3).replace(model_dir="/tmp/x",
                                                   save_checkpoints_steps=9)
  assert config.model_dir == "/tmp/x"
  assert config.tf_random_seed == 3
  assert config.save_checkpoints_secs is None
  with pytest.raises(ValueError, match="unknown field"):
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
                               "task": {"type": "evaluator", "index": 0}})
  config = tfe.RunConfig()
  assert config.task_type == "evaluator"
  assert not config.is_chief
  assert config.master == ""
  assert (config.num_ps_replicas, config.num_worker_replicas) == (0, 0)


def test_tf_config_model_dir(monkeypatch, tmp_path):
  _set_tf_config(monkeypatch, {"model_dir": str(tmp_path)})
  assert tfe.RunConfig().model_dir == str(tmp_path)
  with pytest.raises(ValueError, match="differs from TF_CONFIG"):
    tfe.RunConfig(model_dir=str(tmp_path / "other"))
