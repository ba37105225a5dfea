"""The default engine: the function engine, or the graph engine for a call.

Without RunConfig(engine=...) or $ESTIMATOR_COMPAT_ENGINE, a call the
function engine cannot honour (it raises NeedsGraphEngine while setting up)
runs again on the graph engine, with one log line; nothing was written and no
step ran before. A chosen engine='function' shows the error instead.
"""

import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.distribute import cluster_tasks as cluster
from estimator_compat.engines import dispatch
from estimator_compat.engines.function import ps_training
from estimator_compat.errors import (NeedsGraphEngine,
                                     UnsupportedOnFunctionEngine)
from tests import scaffold_models as sm

_LINE = ("Scaffold.init_fn needs a TF1 Session (a function gets the Session "
         "after initialization) in {call}(): running this {call}() on the "
         "graph engine.")


# No engine chosen: the default engine decides per call.
_default_engine = sm.default_engine


def _listing(model_dir):
  """{file: (size, mtime)} of everything under model_dir."""
  out = {}
  for root, _, files in os.walk(model_dir):
    for name in files:
      path = os.path.join(root, name)
      out[os.path.relpath(path, model_dir)] = (os.path.getsize(path),
                                               os.path.getmtime(path))
  return out


def _kinds(model_dir):
  """File names with the events files' timestamps and hosts left out."""
  return sorted("events" if f.startswith("events.") else f
                for f in os.listdir(model_dir))


def test_train_reruns_on_the_graph_engine_with_one_log_line(tmp_path, caplog):
  est = sm.estimator(tmp_path / "default", "init_fn")
  with caplog.at_level(logging.INFO):
    est.train(sm.input_fn, steps=2)
  assert sm.routed_to_graph(caplog) == [_LINE.format(call="train")]
  assert est.get_variable_value("w") == 3.0
  # Exactly what the graph engine alone writes: the function engine's
  # attempt left nothing behind (one events file, no extra checkpoint).
  graph = sm.estimator(tmp_path / "graph", "init_fn", engine="graph")
  graph.train(sm.input_fn, steps=2)
  assert _kinds(tmp_path / "default") == _kinds(tmp_path / "graph")
  assert _kinds(tmp_path / "default").count("events") == 1


def test_evaluate_and_predict_rerun_on_the_graph_engine(tmp_path, caplog):
  est = sm.estimator(tmp_path, "init_fn")
  est.train(sm.input_fn, steps=2)
  caplog.clear()
  with caplog.at_level(logging.INFO):
    assert est.evaluate(sm.input_fn)["w"] == 3.0
    predictions = est.predict(sm.input_fn)
    assert not sm.routed_to_graph(caplog)[1:]  # predict() has not started yet.
    first = next(predictions)
    # Settled before the first example.
    assert sm.routed_to_graph(caplog) == [_LINE.format(call="evaluate"),
                               _LINE.format(call="predict")]
  assert [float(first["p"][0])] + [float(p["p"][0]) for p in predictions] == [
      0.0, 3.0, 6.0, 9.0]


@pytest.mark.parametrize("call", ["train", "evaluate", "predict"])
def test_chosen_function_engine_fails_before_writing_anything(tmp_path, call):
  sm.estimator(tmp_path, "init_fn", engine="graph").train(sm.input_fn,
                                                          steps=2)
  before = _listing(tmp_path)
  est = sm.estimator(tmp_path, "init_fn", engine="function")
  with pytest.raises(NeedsGraphEngine,
                     match=r"Scaffold.init_fn needs a TF1 Session .*"
                     r"Fix: run this program on the graph engine"):
    if call == "train":
      est.train(sm.input_fn, steps=2)
    elif call == "evaluate":
      est.evaluate(sm.input_fn)
    else:
      next(est.predict(sm.input_fn))
  assert _listing(tmp_path) == before
  assert est.get_variable_value("global_step") == 2


def test_environment_variable_chooses_the_engine_too(tmp_path, monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  est = sm.estimator(tmp_path, "init_fn")
  with pytest.raises(NeedsGraphEngine):
    est.train(sm.input_fn, steps=2)
  assert not list(tmp_path.iterdir())


def test_a_strategy_the_graph_engine_cannot_run_is_a_clear_error(tmp_path):
  est = sm.estimator(tmp_path, "init_fn",
                     train_distribute=tf.distribute.OneDeviceStrategy(
                         "/cpu:0"))
  with pytest.raises(UnsupportedOnFunctionEngine,
                     match=r"Scaffold.init_fn needs a TF1 Session.*but the "
                     r"graph engine runs a strategy \(train_distribute\) "
                     r"only in TF1 mode.*Fix"):
    est.train(sm.input_fn, steps=2)
  assert not list(tmp_path.iterdir())


def test_steps_per_loop_is_a_clear_error_too(tmp_path):
  est = sm.estimator(tmp_path, "init_fn", steps_per_loop=2)
  with pytest.raises(UnsupportedOnFunctionEngine,
                     match=r"steps_per_loop=2\) needs the function engine"):
    est.train(sm.input_fn, steps=2)
  assert not list(tmp_path.iterdir())


def test_parameter_server_step_refuses_during_its_trace(tmp_path):
  """The PS step function raises while tracing, before any closure runs."""
  est = sm.estimator(tmp_path, "init_fn")
  step_fn = ps_training._StepFunction(est._setup, tf.distribute.get_strategy())  # pylint: disable=protected-access
  iterator = iter(sm.input_fn())
  with pytest.raises(NeedsGraphEngine, match="Scaffold.init_fn"):
    step_fn.function.get_concrete_function(iterator, tf.constant(0, tf.int64))
  assert step_fn.spec is None  # Nothing kept from the failed trace.


def _init_fn_in_training(features, labels, mode):
  """sm.model_fn whose Scaffold.init_fn (w = 3) is set in TRAIN mode only."""
  field = "init_fn" if mode == tfe.ModeKeys.TRAIN else None
  return sm.model_fn(features, labels, mode, {"field": field})


def test_evaluate_inside_a_graph_engine_run_runs_on_the_function_engine(
    tmp_path, caplog, monkeypatch):
  # train_and_evaluate with throttle_secs=0 evaluates after each checkpoint,
  # from the graph engine's saving listener: inside its TF1 graph, though
  # the program never disabled eager execution. That evaluation needs no
  # graph engine: it runs on the function engine, with one log line.
  monkeypatch.setattr(dispatch, "_inside_graph_logged", set())
  est = tfe.Estimator(_init_fn_in_training, model_dir=str(tmp_path),
                      config=tfe.RunConfig(save_checkpoints_steps=1))
  with caplog.at_level(logging.INFO):
    metrics, _ = tfe.train_and_evaluate(
        est, tfe.TrainSpec(sm.input_fn, max_steps=2),
        tfe.EvalSpec(sm.input_fn, steps=None, throttle_secs=0,
                     start_delay_secs=0))
  messages = [r.getMessage() for r in caplog.records]
  assert sm.routed_to_graph(caplog) == [_LINE.format(call="train")]
  assert not [m for m in messages if "Eager execution is disabled" in m]
  inside = [m for m in messages if "called inside a TF1 graph" in m]
  assert inside == [
      "evaluate() was called inside a TF1 graph (from a hook or saving "
      "listener of a graph-engine run, or under `with "
      "tf.Graph().as_default()`) while eager execution is on: it runs in a "
      "fresh eager context of its own, where it picks its engine as any "
      "other call (logged once)."]
  evaluated = [m for m in messages if m.startswith("Saving dict for global")]
  assert len(evaluated) >= 2, messages
  assert metrics["w"] == 3.0 and metrics["global_step"] == 2


def test_calls_under_a_users_graph_run_as_any_other(tmp_path, caplog):
  # The Estimator built each call's graph afresh, whatever graph was the
  # default; a call under `with tf.Graph().as_default()` runs as outside.
  est = sm.estimator(tmp_path)
  with tf.Graph().as_default(), caplog.at_level(logging.INFO):
    est.train(sm.input_fn, steps=2)
    assert est.evaluate(sm.input_fn)["w"] == 1.0
    predictions = [p["p"] for p in est.predict(sm.input_fn)]
  assert sm.routed_to_graph(caplog) == []
  np.testing.assert_allclose(np.ravel(predictions), [0.0, 1.0, 2.0, 3.0])


def _tf1_mode_program(engine, strategy="none"):
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  result = subprocess.run(
      [sys.executable, os.path.join(root, "tests", "tf1_mode_program.py"),
       engine, strategy], capture_output=True, text=True, env=env, timeout=300,
      check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def test_tf1_mode_program_runs_on_the_graph_engine():
  """disable_eager_execution(): every call goes to the graph engine."""
  out, log = _tf1_mode_program("default")
  # The real Estimator (TF 2.15.1) on this program.
  assert out["global_step"] == 4
  assert out["eval"]["acc"] == 0.375
  assert abs(out["eval"]["loss"] - 1.08263) < 1e-5
  assert out["predict"] == [1] * 8
  np.testing.assert_allclose(
      out["kernel"], [[0.98917, 1.03764, 0.97319], [0.99050, 1.03906, 0.97044],
                      [0.99182, 1.04049, 0.96769]], atol=1e-5)
  for call in ("train", "evaluate", "predict"):
    assert log.count(f"running this {call}() on the graph engine") == 1, log
  assert "Eager execution is disabled" in log


def test_tf1_mode_program_on_the_chosen_function_engine_is_a_clear_error():
  out, _ = _tf1_mode_program("function")
  assert out["error"] == "NeedsGraphEngine"
  assert out["message"].startswith("Eager execution is disabled")
  assert "RunConfig(engine='graph')" in out["message"]


@pytest.mark.parametrize("strategy", ["mirrored", "mirrored_v1"])
def test_tf1_mode_program_trains_under_mirrored_strategy(strategy):
  """TF1 mode + train_distribute: the graph engine runs the strategy."""
  out, _ = _tf1_mode_program("default", strategy)
  # The real Estimator (TF 2.15.1), TF1 mode, the same strategy and devices:
  # 16 rows, 2 per replica on 2 replicas: 4 steps.
  assert out["global_step"] == 4
  np.testing.assert_allclose(
      out["kernel"], [[0.92222, 1.09046, 0.98732], [0.92154, 1.09275, 0.98571],
                      [0.92086, 1.09504, 0.98411]], atol=1e-5)
  assert out["eval"]["acc"] == 0.375
  assert abs(out["eval"]["loss"] - 1.22845) < 1e-5


@pytest.mark.parametrize("engine", ["default", "graph"])
def test_tf1_mode_eval_distribute_alone_trains_without_a_strategy(engine):
  # The Estimator trained such a config plainly and evaluated it on its one
  # replica; the graph engine crashed on the missing train_distribute
  # (AttributeError, found by distribute_strategy_estimator_integration_test).
  out, _ = _tf1_mode_program(engine, "eval_distribute_only")
  plain, _ = _tf1_mode_program(engine)
  assert "error" not in out, out
  assert out == plain


def test_tf1_mode_eval_distribute_is_a_clear_error():
  out, _ = _tf1_mode_program("default", "eval_distribute")
  assert out["error"] == "UnsupportedOnFunctionEngine"
  assert "does not run eval_distribute" in out["message"]


@pytest.mark.slow
def test_tf1_mode_multi_worker_program_trains_as_the_estimator(tmp_path):
  """TF1 mode + MultiWorkerMirroredStrategy on a chief and a worker."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  spec = cluster.loopback_cluster(workers=1)
  processes = []
  for task_type in ("chief", "worker"):
    env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3",
               TF_CONFIG=cluster.tf_config(spec, task_type, 0))
    env.pop("ESTIMATOR_COMPAT_ENGINE", None)
    processes.append(subprocess.Popen(
        [sys.executable,
         os.path.join(root, "tests", "tf1_multi_worker_program.py"),
         str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env))
  outputs = [p.communicate(timeout=300) for p in processes]
  for process, (stdout, stderr) in zip(processes, outputs):
    assert process.returncode == 0, stderr[-3000:]
    out = json.loads(stdout.strip().splitlines()[-1])
    # The real Estimator (TF 2.15.1), the same program and cluster: 16 rows
    # sharded over 2 workers, 2 per replica: 4 steps; the non-chief's saves
    # go to tmp_worker_0/.
    assert out["global_step"] == 4
    np.testing.assert_allclose(
        out["kernel"], [[0.92222, 1.09046, 0.98732],
                        [0.92154, 1.09275, 0.98571],
                        [0.92086, 1.09504, 0.98411]], atol=1e-5)
    assert {"model.ckpt-0.index", "model.ckpt-2.index", "model.ckpt-4.index",
            "tmp_worker_0"} <= set(out["files"])
  assert "on the graph engine" in outputs[0][1]


def test_a_strategy_call_under_a_users_graph_reruns_on_the_graph_engine(
    tmp_path):
  # Under `with tf.Graph().as_default()` (TF1 graph mode, as tf.distribute's
  # test combinations run mode="graph") a call that needs the graph engine
  # and sets train_distribute runs there, as the Estimator ran it in a TF1
  # graph; the graph engine refuses strategies only with eager execution on.
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  est = sm.estimator(tmp_path, "init_fn", train_distribute=strategy)
  with tf.Graph().as_default():
    est.train(sm.input_fn, steps=2)
  assert est.get_variable_value("w") == 3.0
  assert est.get_variable_value("global_step") == 2
  # Outside a graph the graph engine still refuses it, naming both causes.
  with pytest.raises(UnsupportedOnFunctionEngine,
                     match=r"Scaffold.init_fn.*strategy \(train_distribute\) "
                     r"only in TF1 mode"):
    sm.estimator(tmp_path / "eager", "init_fn",
                 train_distribute=strategy).train(sm.input_fn, steps=2)
