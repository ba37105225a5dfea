"""Migration checks against a TF2 rewrite: a Keras Model or a factory.

The Keras rewrite of examples/mlp_classifier is checked against the real
Estimator's golden (TF 2.15, tests/migration_goldens/mlp_classifier); each
planted slip fails the check that sees it, and its cause names it.
"""

import functools
import os
import subprocess
import sys

import pytest
import tensorflow as tf

import estimator_compat
import migration
from migration.variable_map import VariableMap

estimator_compat.install()

# pylint: disable=g-import-not-at-top,wrong-import-position
from examples.mlp_classifier import keras_rewrite
from examples.mlp_classifier import model as mlp
from tests import rewrite_programs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "migration_goldens", "mlp_classifier")
PARAMS = {"hidden_units": [32], "learning_rate": 0.01, "batch_size": 32}


def _against_golden(rewrite):
  # The rewrite's layers take Keras's automatic names (dense, dense_1), as
  # in the fresh process a rewrite runs in; layers other tests in this
  # process made would shift them.
  tf.keras.backend.clear_session()
  return migration.compare(
      mlp.model_fn, mlp.input_fn, params=PARAMS,
      serving_input_receiver_fn=mlp.serving_input_receiver_fn, old=GOLDEN,
      new=rewrite)


def _result(report, name):
  return next(r for r in report.results if r.name == name)


def test_keras_rewrite_passes_every_check_against_the_real_estimator():
  report = _against_golden(keras_rewrite.rewrite)
  assert report.passed, report.table()
  assert all(r.verdict == "pass" for r in report.results), report.table()


def _slipped(**kwargs):
  return migration.Rewrite(
      build=functools.partial(keras_rewrite.build_model, **kwargs),
      predictions_fn=keras_rewrite.predictions,
      serving_fn=keras_rewrite.serving_fn)


def test_keras_adam_epsilon_fails_trajectory_naming_epsilon():
  report = _against_golden(_slipped(epsilon=1e-7))
  failed = [r.name for r in report.results if not r.passed]
  assert failed == ["trajectory"], report.table()
  cause = _result(report, "trajectory").cause
  assert "epsilon=1e-07" in cause and "AdamOptimizer's default is 1e-08" in (
      cause)


def test_another_initializer_fails_initialization_naming_it():
  report = _against_golden(_slipped(kernel_initializer="he_normal"))
  failed = [r.name for r in report.results if not r.passed]
  assert failed == ["initialization"], report.table()
  result = _result(report, "initialization")
  assert result.worst == "dense/kernel"
  assert "another initializer" in result.cause


def test_labels_off_by_one_fail_inputs_naming_the_shift():
  def shifted_input(mode):
    dataset = estimator_compat.adapters.input_fn_to_dataset_fn(
        mlp.input_fn, mode, params=PARAMS,
        config=estimator_compat.RunConfig(tf_random_seed=42))()
    return dataset.map(lambda features, labels: (features, labels + 1))
  rewrite = _slipped()
  rewrite.input_fn = shifted_input
  report = _against_golden(rewrite)
  result = _result(report, "inputs")
  assert not result.passed, report.table()
  assert "off by 1" in result.cause


def _bn_compare(update_moving_averages):
  return migration.compare(
      rewrite_programs.model_fn, rewrite_programs.input_fn, steps=5,
      old="graph", new=functools.partial(
          rewrite_programs.factory,
          update_moving_averages=update_moving_averages))


def test_factory_rewrite_with_batch_norm_passes():
  report = _bn_compare(True)
  assert report.passed, report.table()


def test_missing_moving_average_updates_fail_trajectory_naming_update_ops():
  report = _bn_compare(False)
  result = _result(report, "trajectory")
  assert not result.passed, report.table()
  assert result.worst.startswith("batch_normalization/moving_")
  assert "UPDATE_OPS" in result.cause


def test_variable_map_pairs_by_shape_and_asks_when_ambiguous():
  structure = [{"name": "a/kernel", "shape": [3, 2]},
               {"name": "b/kernel", "shape": [2, 2]},
               {"name": "c/kernel", "shape": [2, 2]}]
  x = tf.Variable(tf.zeros([3, 2]), name="dense_7/kernel")
  y = tf.Variable(tf.zeros([2, 2]), name="dense_8/kernel")
  z = tf.Variable(tf.zeros([2, 2]), name="dense_9/kernel")
  with pytest.raises(ValueError, match=r"\['b/kernel', 'c/kernel'\].*"
                     "variable_map="):
    VariableMap(structure, [x, y, z])
  mapped = VariableMap(structure, [x, y, z], explicit={
      "b/kernel": "dense_8/kernel", "c/kernel": "dense_9/kernel"})
  assert mapped.model == {"a/kernel": x, "b/kernel": y, "c/kernel": z}


def test_uncompiled_keras_model_is_refused_with_the_fix():
  model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
  with pytest.raises(ValueError, match="not compiled.*model.compile"):
    _against_golden(model)


def test_cli_checks_the_keras_rewrite_against_the_golden(tmp_path):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  done = subprocess.run(
      [sys.executable, "-m", "migration", "check",
       f"--flagfile={GOLDEN}.flags", f"--old={GOLDEN}",
       "--new=examples.mlp_classifier.keras_rewrite:rewrite",
       f"--report={tmp_path / 'report'}"], cwd=ROOT, env=env,
      capture_output=True, text=True, timeout=300, check=False)
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  assert "PASSED: every check matches." in done.stdout


def test_bare_train_step_factory_is_checked_where_it_can_be():
  def factory():
    parts = rewrite_programs.factory()
    return parts["train_step"]  # Variables found as the factory made them.
  report = migration.compare(
      rewrite_programs.model_fn, rewrite_programs.input_fn, steps=3,
      old="graph", new=factory,
      checks=["structure", "initialization", "forward", "trajectory"])
  verdicts = {r.name: r.verdict for r in report.results}
  for name in ("structure", "initialization", "trajectory"):
    assert verdicts[name] == "pass", report.table()
  forward = _result(report, "forward")
  assert not forward.passed and "gives no loss function" in forward.summary
