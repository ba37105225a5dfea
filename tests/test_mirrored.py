"""MirroredStrategy on 2 logical CPUs: the Estimator's semantics, same numbers.

The cases run in one subprocess (tests/mirrored_cases.py), since logical
devices must be set before TensorFlow starts; each test checks one part.
"""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

import estimator_compat as tfe
from tests import models

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIGHT = 1e-5  # float32 sums in another order; anything larger is a bug


@pytest.fixture(scope="module")
def results():
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("TF_CONFIG", None)
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  done = subprocess.run(
      [sys.executable, os.path.join(ROOT, "tests", "mirrored_cases.py")],
      capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
      check=False)
  assert done.returncode == 0, done.stderr[-4000:]
  line = [l for l in done.stdout.splitlines() if l.startswith("RESULTS ")]
  assert line, done.stdout[-2000:]
  return json.loads(line[0][len("RESULTS "):])


pytestmark = pytest.mark.slow


def test_two_replicas_of_16_train_like_one_device_of_32(results):
  # v1 optimizers see MEAN losses scaled by 1/replicas, as in the Estimator.
  assert results["mirrored_vs_single"] < TIGHT
  assert results["global_step"] == 10  # steps, not replica-steps


def test_checkpoint_holds_legacy_names_once(results):
  assert results["names"] == results["single_names"]
  assert not any("replica" in name for name in results["names"])


def test_reported_loss_is_the_global_batch_loss(results):
  assert results["loss_points"] == 10
  assert results["loss_curve_diff"] < TIGHT


def test_eval_metrics_aggregate_across_replicas(results):
  for key, value in results["single_eval"].items():
    assert results["eval"][key] == pytest.approx(value, rel=TIGHT), key


def test_uneven_eval_input_counts_every_example_once(results):
  for key, value in results["uneven_single_eval"].items():
    assert results["uneven_eval"][key] == pytest.approx(value, rel=TIGHT), key


def test_tf1_strategy_object_is_mapped(results):
  assert results["v1_vs_single"] < TIGHT


def test_steps_per_loop_under_a_strategy(results):
  assert results["steps_per_loop_vs_single"] < TIGHT


def test_mirrored_checkpoint_resumes_on_one_device(results):
  assert results["resume_step"] == 10
  assert results["resume_vs_single"] < TIGHT


def test_input_fn_gets_its_input_context(results):
  # One input pipeline (one worker) feeding 2 replicas.
  assert results["input_contexts"] == [[1, 2]]


def test_batch_norm_and_update_ops_under_mirrored(results):
  assert results["batch_norm_step"] == 10
  assert results["batch_norm_moving_mean_moved"]
  assert "batch_normalization/moving_mean" in results["batch_norm_names"]
  assert not any("replica" in n for n in results["batch_norm_names"])


@pytest.mark.parametrize("field", ["train_distribute", "eval_distribute"])
def test_strategy_on_graph_engine_is_refused_early(tmp_path, field):
  config = tfe.RunConfig(engine="graph",
                         **{field: tf.distribute.MirroredStrategy(["/cpu:0"])})
  with pytest.raises(ValueError, match="function engine"):
    tfe.Estimator(models.classifier_fn, model_dir=str(tmp_path),
                  config=config)
  assert models.checkpoint_files(tmp_path) == []


def test_unsupported_strategy_names_the_fix(tmp_path):
  config = tfe.RunConfig(
      train_distribute=tf.distribute.experimental.CentralStorageStrategy())
  with pytest.raises(ValueError, match="not supported.*Fix"):
    tfe.Estimator(models.classifier_fn, model_dir=str(tmp_path),
                  config=config)
