"""Choosing a strategy and a cluster layout (no cluster is started here)."""

import dataclasses
import json
import sys

import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat import command_line
from estimator_compat import local_cluster
from estimator_compat import strategies


@pytest.fixture(autouse=True)
def _no_process_strategy():
  yield
  strategies.set_process_strategy(None)
  strategies.set_process_partitioning(None, None)


def _tf_config(monkeypatch, cluster, task_type="chief"):
  monkeypatch.setenv("TF_CONFIG", json.dumps(
      {"cluster": cluster, "task": {"type": task_type, "index": 0}}))


def test_ps_tasks_in_tf_config_mean_parameter_server(monkeypatch):
  _tf_config(monkeypatch, {"chief": ["h:1"], "worker": ["h:2"],
                           "ps": ["h:3"]})
  assert strategies.training_mode(tfe.RunConfig()) == "parameter_server"


def test_runconfig_strategy_wins_over_flag_and_tf_config(monkeypatch):
  _tf_config(monkeypatch, {"chief": ["h:1"], "ps": ["h:3"]})
  strategies.set_process_strategy("multi_worker_mirrored")
  config = tfe.RunConfig(
      train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]))
  assert strategies.training_mode(config) == "mirrored"
  assert strategies.training_mode(tfe.RunConfig()) == "multi_worker_mirrored"


def test_no_cluster_no_flag_is_default():
  assert strategies.training_mode(tfe.RunConfig()) == "default"
  assert strategies.for_training(tfe.RunConfig()) is None


def test_tf1_mirrored_maps_to_tf2_with_its_devices():
  v1 = tf.compat.v1.distribute.MirroredStrategy(["/cpu:0"])
  v2 = strategies.to_v2(v1, "train_distribute")
  assert isinstance(v2, tf.distribute.MirroredStrategy)
  assert [d.lower() for d in v2.extended.worker_devices] == [
      d.lower() for d in v1.extended.worker_devices]


def test_install_reads_and_removes_distribution_flags(monkeypatch):
  argv = ["prog.py", "--strategy=one_device", "--min_shard_bytes", "64",
          "--own_flag=1", "positional"]
  monkeypatch.setattr(sys, "argv", argv)
  tfe.install()
  assert sys.argv == ["prog.py", "--own_flag=1", "positional"]
  assert strategies.process_strategy_name() == "one_device"


def test_bad_strategy_flag_names_the_choices():
  with pytest.raises(Exception, match="parameter_server"):
    command_line.apply(["prog.py", "--strategy=horovod"])


@pytest.mark.parametrize("spec, message", [
    ("worker2", "JOB:COUNT"), ("gpu:2", "JOB:COUNT"), ("ps:1", "worker:1"),
    ("worker:1,evaluator:2", "at most one evaluator")])
def test_local_cluster_spec_errors(spec, message):
  with pytest.raises(ValueError, match=message):
    local_cluster.parse(spec)


def test_local_cluster_layouts():
  spec, tasks = local_cluster.plan({"worker": 2, "ps": 1},
                                   "parameter_server")
  assert {job: len(a) for job, a in spec.items()} == {
      "chief": 1, "worker": 2, "ps": 1}
  assert all(a.startswith("127.0.0.1:") for a in sum(spec.values(), []))
  assert ("ps", 0) in tasks
  spec, _ = local_cluster.plan({"worker": 2}, "multi_worker_mirrored")
  assert {job: len(a) for job, a in spec.items()} == {"chief": 1, "worker": 1}
  with pytest.raises(ValueError, match="needs ps tasks"):
    local_cluster.plan({"worker": 2}, "parameter_server")
  with pytest.raises(ValueError, match="--strategy=parameter_server"):
    local_cluster.plan({"worker": 2, "ps": 1}, "multi_worker_mirrored")


def test_cluster_without_strategy_in_train_and_evaluate(monkeypatch, tmp_path):
  from tests import models  # pylint: disable=g-import-not-at-top
  _tf_config(monkeypatch, {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]})
  estimator = models.estimator(tmp_path)
  with pytest.raises(ValueError, match="multi_worker_mirrored"):
    tfe.train_and_evaluate(estimator, tfe.TrainSpec(models.input_fn(), 1),
                           tfe.EvalSpec(models.input_fn(num_epochs=1)))
  assert models.checkpoint_files(tmp_path) == []


def test_train_on_evaluator_task_says_what_to_call(monkeypatch, tmp_path):
  from tests import models  # pylint: disable=g-import-not-at-top
  monkeypatch.setenv("TF_CONFIG", json.dumps(
      {"cluster": {"chief": ["127.0.0.1:1"]},
       "task": {"type": "evaluator", "index": 0}}))
  estimator = models.estimator(tmp_path)
  with pytest.raises(ValueError, match="train_and_evaluate"):
    estimator.train(models.input_fn(), steps=1)


def test_the_flags_choice_is_a_frozen_value_passed_in_or_from_the_environment():
  choice = strategies.StrategyChoice("mirrored", min_shard_bytes=64)
  with pytest.raises(dataclasses.FrozenInstanceError):
    choice.name = "one_device"
  assert strategies.training_mode(tfe.RunConfig(), choice) == "mirrored"
  assert strategies.training_mode(tfe.RunConfig()) == "default"
  environ = {}
  choice.to_environment(environ)
  assert environ == {"ESTIMATOR_COMPAT_STRATEGY": "mirrored",
                     "ESTIMATOR_COMPAT_MIN_SHARD_BYTES": "64"}
  assert strategies.StrategyChoice.from_environment(environ) == choice
  with pytest.raises(ValueError, match="Unknown strategy 'horovod'"):
    strategies.StrategyChoice("horovod")
