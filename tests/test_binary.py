"""The absl-flag binary (python -m estimator_compat.train) and the example one."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.slow


def _run(*args, cwd=ROOT):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  return subprocess.run([sys.executable, *args], capture_output=True,
                        text=True, cwd=cwd, env=env, timeout=300, check=False)


def _final(stdout):
  line = [l for l in stdout.splitlines() if l.startswith("final evaluation: ")]
  assert line, stdout
  return json.loads(line[-1][len("final evaluation: "):])


def test_helpfull_lists_the_flags():
  result = _run("-m", "estimator_compat.train", "--helpfull")
  # absl exits 1 after printing help; what matters is what a user reads.
  for flag in ("--model_fn", "--input_fn", "--model_dir", "--train_steps",
               "--eval_steps", "--params", "--engine"):
    assert flag in result.stdout
  assert "module:function" in result.stdout


def test_trains_a_module_model_fn_then_resumes(tmp_path):
  args = ["-m", "estimator_compat.train",
          "--model_fn=examples.mlp_classifier.model:model_fn",
          "--input_fn=examples.mlp_classifier.model:input_fn",
          f"--model_dir={tmp_path}", "--train_steps=60", "--eval_steps=3",
          '--params={"hidden_units": [16], "learning_rate": 0.01}',
          "--save_checkpoints_steps=30", "--engine=graph"]
  first = _run(*args)
  assert first.returncode == 0, first.stderr[-3000:]
  metrics = _final(first.stdout)
  assert metrics["global_step"] == 60
  assert set(metrics) == {"accuracy", "global_step", "loss"}
  assert os.path.exists(tmp_path / "model.ckpt-60.index")
  assert os.path.isdir(tmp_path / "eval")
  # Re-running with the same --train_steps trains nothing and re-evaluates.
  index_before = sorted(f for f in os.listdir(tmp_path) if ".ckpt-" in f)
  again = _run(*args)
  assert again.returncode == 0, again.stderr[-3000:]
  assert "Skipping training since max_steps has already saved" in again.stderr
  assert _final(again.stdout)["global_step"] == 60
  assert sorted(f for f in os.listdir(tmp_path) if ".ckpt-" in f) == (
      index_before)


def test_default_demo_runs_without_flags(tmp_path):
  result = _run("-m", "estimator_compat.train", "--train_steps=200",
                f"--model_dir={tmp_path}")
  assert result.returncode == 0, result.stderr[-3000:]
  metrics = _final(result.stdout)
  assert metrics["global_step"] == 200
  assert metrics["accuracy"] > 0.5  # ten classes: chance is 0.1


@pytest.mark.parametrize("flag,message", [
    ("--params=not json", "--params must be a JSON object"),
    ("--model_fn=no_colon", "must look like package.module:function"),
    ("--model_fn=no_such_module:fn", "cannot import module 'no_such_module'"),
])
def test_bad_flags_fail_with_the_fix(tmp_path, flag, message):
  result = _run("-m", "estimator_compat.train", f"--model_dir={tmp_path}",
                flag)
  assert result.returncode != 0
  assert message in result.stderr
  assert "--train_steps: " not in result.stderr  # one line, not the whole help
  assert not [f for f in os.listdir(tmp_path) if f.startswith("model.ckpt")]


def test_a_failed_run_without_model_dir_leaves_no_temporary_dir(tmp_path):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3",
             TMPDIR=str(tmp_path))
  result = subprocess.run(
      [sys.executable, "-m", "estimator_compat.train",
       "--model_fn=no_such_module:fn"], capture_output=True, text=True,
      cwd=ROOT, env=env, timeout=300, check=False)
  assert result.returncode == 2
  assert "Pass --helpfull" in result.stderr
  assert [f for f in os.listdir(tmp_path)
          if f.startswith("estimator_compat_")] == []


def test_example_absl_binary(tmp_path):
  result = _run("examples/mlp_classifier/train.py", f"--model_dir={tmp_path}",
                "--train_steps=100", "--hidden_units=32")
  assert result.returncode == 0, result.stderr[-3000:]
  assert "global_step=100" in result.stdout
  accuracy = float(result.stdout.split("accuracy=")[1].split()[0])
  assert accuracy > 0.5  # ten classes: chance is 0.1
  # The FinalExporter's SavedModel serves tf.Examples like predict().
  export = result.stdout.split("exported SavedModel: ")[1].split()[0]
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from examples.mlp_classifier import model  # pylint: disable=g-import-not-at-top
  images, _ = model.make_data(4, seed=3)
  examples = [tf.train.Example(features=tf.train.Features(feature={
      "image": tf.train.Feature(float_list=tf.train.FloatList(value=row))}))
              .SerializeToString() for row in images]
  served = tf.saved_model.load(export).signatures["serving_default"](
      examples=tf.constant(examples))
  assert served["probabilities"].shape == (4, 10)
  np.testing.assert_allclose(served["probabilities"].numpy().sum(axis=1), 1.0,
                             rtol=1e-5)
