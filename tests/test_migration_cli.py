"""`python -m migration` as a user runs it: exit codes, table, report dir."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "examples", "seed", "distributed_training_seed.py")
GOLDENS = os.path.join(ROOT, "tests", "migration_goldens")


def _run(args, cwd):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  return subprocess.run([sys.executable, "-m", "migration"] + args, cwd=cwd,
                        env=env, capture_output=True, text=True, timeout=300)


def test_seed_program_passes_graph_vs_function(tmp_path):
  report = tmp_path / "report"
  result = _run(["check", f"--model_fn={SEED}:model_fn",
                 f"--input_fn={SEED}:train_input_fn", f"--report={report}"],
                cwd=tmp_path)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  assert "old: estimator_compat graph engine" in result.stdout
  assert "new: estimator_compat function engine" in result.stdout
  assert "PASSED: every check matches." in result.stdout
  for check in ("structure", "forward", "gradients", "trajectory"):
    assert any(line.startswith(check) and " pass " in line
               for line in result.stdout.splitlines()), check
  # The seed program cannot predict (its loss needs labels) on either side.
  assert "both sides raise the same error" in result.stdout
  # Loading the script skipped its estimator.train(): no ./model_dir.
  assert not (tmp_path / "model_dir").exists()
  assert "skipped Estimator.train()" in result.stderr
  saved = json.loads((report / "report.json").read_text())
  assert saved["passed"] and saved["settings"]["steps"] == 10
  assert (report / "report.txt").read_text().startswith("old: ")
  assert list((report / "old").glob("events.out.tfevents.*"))
  assert list((report / "new").glob("events.out.tfevents.*"))
  assert f"tensorboard --logdir {report}" in result.stdout


def test_seed_golden_from_real_estimator_passes(tmp_path):
  golden = os.path.join(GOLDENS, "seed")
  result = _run(["check", f"--flagfile={golden}.flags", f"--old={golden}"],
                cwd=tmp_path)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  assert "old: tf.estimator on TensorFlow 2.15" in result.stdout


def test_planted_mistake_exits_1_and_names_the_cause(tmp_path):
  module = "tests.planted_program"
  result = _run(["check", f"--model_fn={module}:model_fn",
                 f"--input_fn={module}:input_fn", "--steps=3",
                 f"--new_model_fn={module}:adam_epsilon_mistake_model_fn",
                 "--checks=gradients,trajectory"], cwd=tmp_path)
  assert result.returncode == 1, result.stdout + result.stderr[-3000:]
  lines = result.stdout.splitlines()
  assert any(line.startswith("gradients") and " pass " in line
             for line in lines)
  assert any(line.startswith("trajectory") and " FAIL " in line
             for line in lines)
  assert "epsilon" in result.stdout
  assert "FAILED: 1 of 2 checks differ (trajectory)." in result.stdout
  # Without --report the report goes to a new ./migration_reports/<time>.
  written = list((tmp_path / "migration_reports").glob("*/report.json"))
  assert len(written) == 1
  assert json.loads(written[0].read_text())["passed"] is False


def test_bad_flags_exit_2_with_the_fix(tmp_path):
  missing = _run(["check", "--input_fn=tests.planted_program:input_fn"],
                 cwd=tmp_path)
  assert missing.returncode == 2
  assert "--model_fn is required" in missing.stderr
  ps = _run(["check", "--model_fn=tests.planted_program:model_fn",
             "--input_fn=tests.planted_program:input_fn",
             "--strategy=parameter_server"], cwd=tmp_path)
  assert ps.returncode == 2 and "asynchronous" in ps.stderr
  typo = _run(["check", "--model_fn=tests.planted_program:modelfn",
               "--input_fn=tests.planted_program:input_fn"], cwd=tmp_path)
  assert typo.returncode == 2
  assert "has no 'modelfn'" in typo.stderr and "model_fn" in typo.stderr
  usage = _run(["compare"], cwd=tmp_path)
  assert usage.returncode == 2 and "record|check" in usage.stderr


def test_helpfull_lists_the_flags(tmp_path):
  result = _run(["--helpfull"], cwd=tmp_path)
  assert result.returncode in (0, 1)
  text = result.stdout + result.stderr
  for flag in ("--model_fn", "--input_fn", "--params", "--steps", "--old",
               "--new", "--strategy", "--report", "--out", "--tolerance"):
    assert flag in text, flag
  assert "GOLDEN_DIR" in text and "exits 0 only" in text


def test_record_then_check_against_it(tmp_path):
  module = "tests.planted_program"
  out = tmp_path / "golden"
  flags = [f"--model_fn={module}:model_fn", f"--input_fn={module}:input_fn",
           "--steps=3"]
  recorded = _run(["record", f"--out={out}"] + flags, cwd=tmp_path)
  assert recorded.returncode == 0, recorded.stderr[-3000:]
  # No real Estimator on TF 2.21: our default engine recorded, and says so.
  meta = json.loads((out / "recording.json").read_text())
  assert meta["engine"] == "function" and meta["settings"]["steps"] == 3
  assert meta["runtime"].startswith("estimator_compat function engine")
  again = _run(["record", f"--out={out}"] + flags, cwd=tmp_path)
  assert again.returncode == 2 and "never overwritten" in again.stderr
  checked = _run(["check", f"--old={out}"] + flags[:2], cwd=tmp_path)
  assert checked.returncode == 0, checked.stdout + checked.stderr[-3000:]


def test_mirrored_new_side_matches_real_estimator_single_device(tmp_path):
  """2 logical CPUs: each step reads the golden's batch split in two."""
  golden = os.path.join(GOLDENS, "mlp_classifier")
  result = _run(["check", f"--flagfile={golden}.flags", f"--old={golden}",
                 "--strategy=mirrored", "--checks=inputs,trajectory"],
                cwd=tmp_path)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  assert "strategy mirrored" in result.stdout
  assert "devices ('/job:localhost/replica:0/task:0/device:CPU:0', " \
         "'/job:localhost/replica:0/task:0/device:CPU:1')" in result.stderr
