"""`migration run-both`: one unchanged program on the real Estimator and here.

End-to-end tests need the TF 2.15 interpreter with the real Estimator
($ESTIMATOR_COMPAT_OLD_PYTHON, else
~/.cache/estimator-compat/tf215-venv/bin/python) and are skipped without it.
"""

import json
import os
import subprocess
import sys

import pytest

from migration import printed_metrics
from migration import run_both

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join("tests", "run_both_program.py")
OLD_PYTHON = os.environ.get("ESTIMATOR_COMPAT_OLD_PYTHON") or os.path.expanduser(
    "~/.cache/estimator-compat/tf215-venv/bin/python")
NEEDS_OLD = pytest.mark.skipif(
    not os.path.exists(OLD_PYTHON),
    reason=f"no TF 2.15 interpreter with the real Estimator at {OLD_PYTHON} "
    "(set ESTIMATOR_COMPAT_OLD_PYTHON)")


def _run_both(args, cwd=ROOT):
  return subprocess.run(
      [sys.executable, "-m", "migration", "run-both"] + args,
      capture_output=True, text=True, cwd=cwd, timeout=900, check=False,
      env=dict(os.environ, PYTHONPATH=ROOT, ESTIMATOR_COMPAT_OLD_PYTHON=OLD_PYTHON))


# --- arguments --------------------------------------------------------------


def test_options_before_after_and_after_a_double_dash():
  ours, program = run_both.split_argv(
      ["--rtol=1e-6", "prog.py", "--model_dir={workdir}/m", "--old-python",
       "/py", "--steps", "3", "--json"])
  assert ours == ["--rtol=1e-6", "--old-python", "/py", "--json"]
  assert (program.target, program.is_module, program.args) == (
      "prog.py", False, ("--model_dir={workdir}/m", "--steps", "3"))
  ours, program = run_both.split_argv(
      ["--keep", "-m", "pkg.train", "--", "--json", "--keep"])
  assert ours == ["--keep"]
  assert (program.target, program.is_module, program.args) == (
      "pkg.train", True, ("--json", "--keep"))
  assert program.argv("/w/new") == ["module", "pkg.train", "--json", "--keep"]
  _, program = run_both.split_argv(["p.py", "--out={workdir}/x", "{workdir}"])
  assert program.argv("/w/old")[2:] == ["--out=/w/old/x", "/w/old"]
  assert run_both.split_argv(["--json"]) == (["--json"], None)


def test_bad_arguments_exit_2(tmp_path, capsys):
  assert run_both.main([]) == 2
  assert run_both.main(["--json"]) == 2
  assert "name the program" in capsys.readouterr().err
  assert run_both.main([str(tmp_path / "missing.py")]) == 2
  assert "is not a file" in capsys.readouterr().err
  program = tmp_path / "p.py"
  program.write_text("print('x = 1')\n")
  assert run_both.main([str(program), "--old-python", sys.executable]) == 2
  assert "no tensorflow_estimator" in capsys.readouterr().err.replace(
      "no tensorflow or no tensorflow_estimator", "no tensorflow_estimator")
  assert run_both.main([str(program), "--rtol", "x"]) == 2


# --- printed metric lines ---------------------------------------------------

NUMPY1 = "{'accuracy': 0.953125, 'global_step': 10, 'loss': 0.18130651}"
NUMPY2 = ("{'accuracy': np.float32(0.953125), 'global_step': np.int64(10), "
          "'loss': np.float32(0.18130651)}")


def test_metric_lines_read_numpy_reprs_and_log_lines():
  assert printed_metrics.metric_lines(
      f"starting\n{NUMPY2}\nloss = 0.5, step = 3 (0.1 sec)\nlr: 1e-3\n") == [
          [("accuracy", "0.953125"), ("global_step", "10"),
           ("loss", "0.18130651")],
          [("loss", "0.5"), ("step", "3")], [("lr", "1e-3")]]
  assert printed_metrics.compare(NUMPY1, NUMPY2, 0.0, 0.0) == []


def test_metric_line_differences_are_named():
  changed = NUMPY1.replace("0.18130651", "0.1813066").replace("10", "11")
  found = printed_metrics.compare(NUMPY1, changed, 0.0, 0.0)
  assert [(d.kind, d.where) for d in found] == [
      ("printed", "stdout metric line 1: global_step"),
      ("printed", "stdout metric line 1: loss")]
  assert [(d.kind, d.where) for d in printed_metrics.compare(
      NUMPY1, changed, 1e-4, 0.0)] == [
          ("printed", "stdout metric line 1: global_step")]
  assert [d.detail for d in printed_metrics.compare(
      "a = 1\nb = 2", "a = 1", 0, 0)] == ["2 metric lines old vs 1 new"]


# --- end to end -------------------------------------------------------------


@NEEDS_OLD
@pytest.mark.slow
def test_run_both_on_a_legacy_script_finds_no_difference(tmp_path):
  workdir = str(tmp_path / "work")
  done = _run_both([PROGRAM, "--model_dir={workdir}/model", "--json",
                    "--workdir", workdir])
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  result = json.loads(done.stdout)
  assert result["ok"] and result["differences"] == []
  assert result["seeded_first_checkpoints"] == ["model"]
  model = result["model_dirs"]["model"]
  assert model["ok"] and model["compared"] == {
      "checkpoints": 3, "event tags": 5, "exports": 1}
  with open(os.path.join(workdir, "old.stdout")) as f:
    old_out = f.read()
  with open(os.path.join(workdir, "new.stdout")) as f:
    new_out = f.read()
  assert len(printed_metrics.metric_lines(old_out)) == 1
  assert (printed_metrics.metric_lines(old_out) ==
          printed_metrics.metric_lines(new_out))
  # The copied ckpt-0 is the one the old side trained from (its own
  # model.ckpt-0), and the new side restored it rather than initializing.
  from migration.diff import checkpoints  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  copied = tf.train.load_checkpoint(
      os.path.join(workdir, "ckpt0", "model", "model.ckpt-0"))
  for side in ("old", "new"):
    saved = tf.train.load_checkpoint(checkpoints.checkpoints(
        os.path.join(workdir, side, "model"))[0])
    for name in copied.get_variable_to_shape_map():
      np.testing.assert_array_equal(saved.get_tensor(name),
                                    copied.get_tensor(name))
  assert os.listdir(os.path.join(workdir, "tensorboard", "model", "old"))


@NEEDS_OLD
@pytest.mark.slow
def test_run_both_exit_codes_on_tiny_programs(tmp_path):
  # The TF version differs between the sides; an unseeded draw differs
  # between any two runs, so --rerun-old lists it apart, uncounted.
  (tmp_path / "versioned.py").write_text(
      "import numpy as np\nimport tensorflow as tf\n"
      "print('minor =', int(tf.__version__.split('.')[1]))\n"
      "print('draw =', np.random.rand())\n")
  done = _run_both(["-m", "versioned", "--rerun-old", "--json"],
                   cwd=str(tmp_path))
  assert done.returncode == 1, done.stderr[-3000:]
  result = json.loads(done.stdout)
  assert [(d["kind"], d["where"]) for d in result["differences"]] == [
      ("printed", "stdout metric line 1: minor")]
  assert result["differences"][0]["detail"].startswith("old 15 vs new ")
  assert [(d["kind"], d["where"]) for d in result[
      "explained_by_old_rerun"]] == [("printed", "stdout metric line 2: draw")]
  assert result["old_rerun_same"] is False
  assert any("saved no model.ckpt-0" in n for n in result["notes"])
  (tmp_path / "broken.py").write_text("raise SystemExit('no data here')\n")
  done = _run_both([str(tmp_path / "broken.py")], cwd=str(tmp_path))
  assert done.returncode == 2
  assert "the old side failed" in done.stderr
  assert "no data here" in done.stderr
