"""ModelFnModule against the real Estimator (TF 2.15): its checkpoints in,
the same predictions, metrics and training out.

The goldens were recorded on TensorFlow 2.15.1 + tensorflow-estimator 2.15.0
(tests/migration_goldens/mlp_classifier by tools/record_migration_goldens.sh,
tests/goldens/* by tools/record_goldens.sh): real model.ckpt-0 and final
checkpoints, the batches the Estimator fed, its losses, weights, metrics and
predictions.
"""

import importlib
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat
from estimator_compat import adapters
from examples.mlp_classifier import model as mlp_classifier
from migration import batches as batches_lib

estimator_compat.install()
# The golden programs use tf.estimator at import.
mlp = importlib.import_module("tests.golden_programs.mlp")
batch_norm = importlib.import_module("tests.golden_programs.batch_norm")

HERE = os.path.dirname(os.path.abspath(__file__))
MIGRATION_GOLDEN = os.path.join(HERE, "migration_goldens", "mlp_classifier")
GOLDENS = os.path.join(HERE, "goldens")
RTOL, ATOL = 1e-3, 1e-5
PARAMS = {"hidden_units": [32], "learning_rate": 0.01, "batch_size": 32}


def _close(actual, expected, what):
  np.testing.assert_allclose(np.asarray(actual, np.float64),
                             np.asarray(expected, np.float64), rtol=RTOL,
                             atol=ATOL, err_msg=what)


@pytest.fixture(scope="module")
def recorded():
  with open(os.path.join(MIGRATION_GOLDEN, "recording.json")) as f:
    meta = json.load(f)
  inputs = dict(np.load(os.path.join(MIGRATION_GOLDEN, "inputs.npz")))
  return meta, {name: batches_lib.unflatten(inputs, name)
                for name in ("train", "eval", "predict")}


def _module(checkpoint_dir):
  module = adapters.ModelFnModule(mlp_classifier.model_fn, params=PARAMS)
  module.build({"image": tf.TensorSpec([None, 64], tf.float32)},
               tf.TensorSpec([None], tf.int64))
  module.load_legacy_checkpoint(os.path.join(MIGRATION_GOLDEN,
                                             checkpoint_dir))
  return module


def test_real_checkpoint_gives_the_real_predictions_and_metrics(recorded):
  meta, batches = recorded
  module = _module("final")
  assert int(module.global_step.numpy()) == 8
  predictions = [module(f)["predictions"] for f, _ in batches["predict"]]
  expected = dict(np.load(os.path.join(MIGRATION_GOLDEN, "predictions.npz")))
  for key, value in expected.items():
    _close(np.concatenate([p[key] for p in predictions]), value, key)
  for features, labels in batches["eval"]:
    metrics = module(features, labels, mode="eval")["metrics"]
  for key in ("accuracy", "loss"):
    _close(metrics[key], meta["eval_metrics"][key], key)


def test_train_step_from_real_ckpt0_matches_real_weights(recorded):
  meta, batches = recorded
  module = _module("ckpt0")
  losses = [float(module.train_step(f, l)) for f, l in batches["train"]]
  _close(losses, [loss for _, loss in meta["losses"]], "losses")
  assert int(module.global_step.numpy()) == 8
  final = tf.train.load_checkpoint(os.path.join(MIGRATION_GOLDEN, "final"))
  variables = module.variables_by_legacy_name()
  for name in final.get_variable_to_shape_map():
    _close(variables[name].numpy(), final.get_tensor(name), name)


def _replay_golden(program, name, tmp_path, features_of=lambda f: f):
  """Trains a golden program with train_step on its own input_fn."""
  config = estimator_compat.RunConfig(**program.CONFIG)
  module = adapters.ModelFnModule(program.model_fn, params=program.PARAMS,
                                  config=config)
  dataset = adapters.input_fn_to_dataset_fn(
      program.train_input_fn, "train", params=program.PARAMS,
      config=config)()
  batches = iter(dataset)
  features, labels = next(batches)
  module.build(features, labels)
  module.load_legacy_checkpoint(os.path.join(GOLDENS, name, "ckpt0"))
  step = tf.function(module.train_step)
  step(features, labels)
  for _ in range(program.TRAIN_STEPS - 1):
    step(*next(batches))
  expected = dict(np.load(os.path.join(GOLDENS, name, "variables.npz")))
  variables = module.variables_by_legacy_name()
  assert set(expected) <= set(variables)
  for var_name, value in expected.items():
    _close(variables[var_name].numpy(), value, var_name)
  # And back: the Estimator's format, readable by name.
  written = module.save_legacy_checkpoint(str(tmp_path) + os.sep)
  assert written.endswith(f"model.ckpt-{program.TRAIN_STEPS}")
  return module


def test_keras_model_in_model_fn_trained_with_train_step(tmp_path):
  module = _replay_golden(mlp, "mlp", tmp_path)
  predictions = dict(np.load(os.path.join(GOLDENS, "mlp", "predictions.npz")))
  out = module({"x": mlp.X[:20]})["predictions"]
  for key, value in predictions.items():
    _close(out[key], value, key)


def test_update_ops_dependency_trained_with_train_step(tmp_path):
  module = _replay_golden(batch_norm, "batch_norm", tmp_path)
  names = module.variables_by_legacy_name()
  assert "batch_normalization/moving_mean" in names
