"""Choosing a strategy and a cluster layout (no cluster is started here)."""

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.distribute import flags as command_line
from estimator_compat.distribute import local_cluster
from estimator_compat.distribute import strategies
from estimator_compat.front import configuration
from tests import tiny_strategy_model


def _flags():
  return configuration.strategy_flags()


@pytest.fixture(autouse=True)
def _no_process_strategy():
  yield
  configuration.set_strategy_flags(configuration.StrategyChoice())


def _tf_config(monkeypatch, cluster, task_type="chief"):
  monkeypatch.setenv("TF_CONFIG", json.dumps(
      {"cluster": cluster, "task": {"type": task_type, "index": 0}}))


def test_ps_tasks_in_tf_config_mean_parameter_server(monkeypatch):
  _tf_config(monkeypatch, {"chief": ["h:1"], "worker": ["h:2"],
                           "ps": ["h:3"]})
  assert strategies.training_mode(tfe.RunConfig(),
                                 _flags()) == "parameter_server"


def test_runconfig_strategy_wins_over_flag_and_tf_config(monkeypatch):
  _tf_config(monkeypatch, {"chief": ["h:1"], "ps": ["h:3"]})
  configuration.set_process_strategy("multi_worker_mirrored")
  config = tfe.RunConfig(
      train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]))
  assert strategies.training_mode(config, _flags()) == "mirrored"
  assert strategies.training_mode(tfe.RunConfig(),
                                 _flags()) == "multi_worker_mirrored"


def test_no_cluster_no_flag_is_default():
  assert strategies.training_mode(tfe.RunConfig(), _flags()) == "default"
  assert strategies.for_training(tfe.RunConfig(), _flags()) is None


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
  assert configuration.process_strategy_name() == "one_device"
  assert configuration.strategy_flags().min_shard_bytes == 64


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


def test_the_flags_choice_is_a_frozen_value_passed_in_not_the_environment():
  choice = strategies.StrategyChoice("mirrored", min_shard_bytes=64)
  with pytest.raises(dataclasses.FrozenInstanceError):
    choice.name = "one_device"
  assert strategies.training_mode(tfe.RunConfig(), choice) == "mirrored"
  assert strategies.training_mode(tfe.RunConfig(), _flags()) == "default"
  before = dict(os.environ)
  configuration.set_strategy_flags(choice)
  assert dict(os.environ) == before  # Not a channel between modules.
  assert configuration.resolve(tfe.RunConfig()).strategy == choice
  with pytest.raises(ValueError, match="Unknown strategy 'horovod'"):
    strategies.StrategyChoice("horovod")


def test_strategies_from_a_name_are_new_per_call_but_per_process_ones(
    monkeypatch):
  # No module-level cache of strategies beyond what TensorFlow keeps per
  # process (the multi-worker collective context, the PS cluster).
  # (A stand-in for the multi-worker strategy: a real one would configure
  # this test process's collective ops for good.)
  monkeypatch.setattr(tf.distribute, "MultiWorkerMirroredStrategy", object)
  monkeypatch.setattr(strategies, "_built", {})
  config = tfe.RunConfig()
  for name in ("one_device", "mirrored"):
    choice = strategies.StrategyChoice(name)
    first = strategies.for_training(config, choice)
    second = strategies.for_training(config, choice)
    assert type(first) is type(second) and first is not second, name
  choice = strategies.StrategyChoice("multi_worker_mirrored")
  assert (strategies.for_training(config, choice) is
          strategies.for_training(config, choice))


# TF1 strategy objects in RunConfig. The real Estimator (TF 2.15) trains and
# evaluates under each of them, without TF_CONFIG, exactly as without a
# strategy (global_step 6, the same kernel and metrics), eager execution on
# or off; here they raised TypeError (a builder called without its argument).
_TF1_STRATEGIES = {
    "mirrored_v1": lambda: tf.compat.v1.distribute.MirroredStrategy(),
    "parameter_server_v1": lambda: (
        tf.compat.v1.distribute.experimental.ParameterServerStrategy()),
    "multi_worker_mirrored_v1": lambda: (
        tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy()),
}


def _train_and_evaluate(model_dir, strategy):
  est = tfe.Estimator(tiny_strategy_model.model_fn, str(model_dir), config=tfe.RunConfig(
      train_distribute=strategy, eval_distribute=strategy,
      save_checkpoints_steps=3, tf_random_seed=1))
  est.train(tiny_strategy_model.input_fn, steps=6)
  result = est.evaluate(tiny_strategy_model.input_fn, steps=2)
  return (int(est.get_variable_value("global_step")),
          est.get_variable_value("dense/kernel"), result)


@pytest.mark.parametrize("kind", sorted(_TF1_STRATEGIES))
def test_tf1_strategy_object_trains_and_evaluates_as_without_one(
    tmp_path, kind):
  step, kernel, result = _train_and_evaluate(tmp_path / kind,
                                             _TF1_STRATEGIES[kind]())
  plain_step, plain_kernel, plain = _train_and_evaluate(tmp_path / "plain",
                                                        None)
  assert step == plain_step == 6
  np.testing.assert_allclose(kernel, plain_kernel, rtol=1e-6)
  assert result["accuracy"] == plain["accuracy"]
  np.testing.assert_allclose(result["loss"], plain["loss"], rtol=1e-6)
  assert sorted(tf.io.gfile.glob(str(tmp_path / kind / "*.index"))) == [
      str(tmp_path / kind / f"model.ckpt-{n}.index") for n in (0, 3, 6)]


def _run_tf1_program(tmp_path, kinds, **env):
  program = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "tf1_strategy_objects_program.py")
  environ = dict(os.environ, PYTHONPATH=os.path.dirname(
      os.path.dirname(os.path.abspath(__file__))), TF_CPP_MIN_LOG_LEVEL="3")
  environ.pop("TF_CONFIG", None)
  environ.pop("ESTIMATOR_COMPAT_ENGINE", None)
  environ.update(env)
  done = subprocess.run([sys.executable, program, str(tmp_path)] + kinds,
                        env=environ, capture_output=True, text=True,
                        timeout=600, check=False)
  lines = [l for l in done.stdout.splitlines() if l.startswith("RESULT ")]
  assert done.returncode == 0 and lines, done.stderr[-3000:]
  return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["default", "graph"])
def test_tf1_mode_strategy_objects_run_as_the_estimator(tmp_path, engine):
  # Eager execution disabled (process-wide, so in a subprocess): the
  # Estimator ran MultiWorkerMirroredStrategy without TF_CONFIG as one
  # worker, and each TF1 strategy object on this machine alone.
  kinds = ["none", "multi_worker_mirrored"] + sorted(_TF1_STRATEGIES)
  env = {} if engine == "default" else {"ESTIMATOR_COMPAT_ENGINE": engine}
  results = _run_tf1_program(tmp_path, kinds, **env)
  plain = results.pop("none")
  assert "error" not in plain, plain
  assert plain["global_step"] == 6
  for kind, result in results.items():
    assert "error" not in result, (kind, result)
    assert result["global_step"] == 6, kind
    np.testing.assert_allclose(result["kernel"], plain["kernel"], rtol=1e-6,
                               err_msg=kind)
    assert result["evaluation"] == pytest.approx(plain["evaluation"],
                                                 rel=1e-6), kind
    assert result["checkpoints"] == plain["checkpoints"], kind


def test_tf2_parameter_server_strategy_is_refused_as_the_estimator_did():
  # Built without connecting to a cluster: RunConfig looks at its class only.
  strategy = object.__new__(tf.distribute.experimental.ParameterServerStrategy)
  assert tf.distribute.ParameterServerStrategy is type(strategy)
  for field in ("train_distribute", "eval_distribute"):
    with pytest.raises(ValueError, match=(
        r"^Please use `tf\.compat\.v1\.distribute\.experimental\."
        r"ParameterServerStrategy` for parameter server strategy with "
        r"estimator\. Fix: .*TF_CONFIG cluster that has ps tasks")):
      tfe.RunConfig(**{field: strategy})
    with pytest.raises(ValueError, match="^Please use `tf.compat.v1"):
      tfe.RunConfig().replace(**{field: strategy})
