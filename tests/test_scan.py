"""`python -m migration scan` on the fixture codebase in tests/scan_fixtures."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from migration import __main__ as migration_main
from migration.scan import cli
from migration.scan import scanner

FIXTURES = os.path.join(os.path.dirname(__file__), "scan_fixtures")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (path, line, col, symbol, status[, notebook cell]) of every finding.
EXPECTED = [
    ("codebase/aliases.py", 8, 51,
     "tensorflow_estimator.python.estimator.gc", "unsupported"),
    ("codebase/aliases.py", 9, 61,
     "tensorflow_estimator.python.estimator.estimator.Estimator",
     "supported"),
    ("codebase/aliases.py", 16, 10,
     "tensorflow_estimator.python.estimator.model_fn.EstimatorSpec",
     "supported"),
    ("codebase/aliases.py", 17, 10, "tf.estimator.ModeKeys", "supported"),
    ("codebase/aliases.py", 18, 12, "tf.compat.v1.estimator.RunConfig",
     "supported"),
    ("codebase/aliases.py", 19, 12, "tensorflow_estimator.estimator.Estimator",
     "supported"),
    ("codebase/aliases.py", 20, 10, "tf.compat.v1.train.LoggingTensorHook",
     "supported"),
    ("codebase/aliases.py", 21, 11, "tf.estimator.CheckpointSaverHook",
     "differs"),
    ("codebase/aliases.py", 22, 12,
     "tf.compat.v1.estimator.experimental.KMeans", "supported"),
    ("codebase/aliases.py", 23, 11, "tf.compat.v1.layers.dense", "supported"),
    ("codebase/aliases.py", 24, 12, "tf.feature_column.numeric_column",
     "supported"),
    ("codebase/aliases.py", 25, 14,
     "tensorflow_estimator.python.estimator.gc.largest_export_versions",
     "unsupported"),
    ("codebase/aliases.py", 28, 21,
     "tensorflow_estimator.python.estimator.api._v2.estimator.Estimator",
     "supported"),
    ("codebase/common.py", 5, 12, "tf.estimator.ModeKeys", "supported"),
    ("codebase/contrib_uses.py", 3, 32, "tf.contrib.slim", "tf-removed"),
    ("codebase/contrib_uses.py", 4, 8, "tf.contrib.layers", "tf-removed"),
    ("codebase/contrib_uses.py", 8, 7, "tf.contrib.layers.fully_connected",
     "tf-removed"),
    ("codebase/contrib_uses.py", 9, 7, "tf.contrib.slim.dropout",
     "tf-removed"),
    ("codebase/contrib_uses.py", 10, 12, "tf.contrib.training.HParams",
     "tf-removed"),
    ("codebase/contrib_uses.py", 11, 10, "tf.contrib.layers.flatten",
     "tf-removed"),
    ("codebase/contrib_uses.py", 11, 45, "tf.Session", "tf-removed"),
    ("codebase/model.py", 8, 9, "tf.layers.dense", "tf-removed"),
    ("codebase/model.py", 11, 12, "tf.layers.dense", "tf-removed"),
    ("codebase/model.py", 13, 3, "tf.summary.scalar", "tf-removed"),
    ("codebase/model.py", 14, 16, "tf.train.GradientDescentOptimizer",
     "tf-removed"),
    ("codebase/model.py", 18, 10,
     "tensorflow_estimator.estimator.EstimatorSpec", "supported"),
    ("codebase/notebook.ipynb", 1, 10, "tf.estimator.RunConfig", "supported",
     3),
    ("codebase/notebook.ipynb", 2, 8, "tf.estimator.ProfilerHook", "differs",
     3),
    ("codebase/notebook.ipynb", 1, 7, "tf.contrib.layers.flatten",
     "tf-removed", 4),
    ("codebase/reexports.py", 8, 11, "tf.estimator.ModeKeys", "supported"),
    ("codebase/reexports.py", 8, 42, "tf.estimator.RunConfig", "supported"),
    ("codebase/reexports.py", 9, 11, "tf.estimator.ModeKeys", "supported"),
    ("codebase/train_main.py", 13, 12, "tf.estimator.RunConfig", "supported"),
    ("codebase/train_main.py", 14, 15, "tf.estimator.Estimator", "supported"),
    ("codebase/train_main.py", 17, 14,
     "tf.compat.v1.estimator.inputs.numpy_input_fn", "supported"),
]

EXPECTED_DIFF = '''\
--- a/codebase/aliases.py
+++ b/codebase/aliases.py
@@ -7,7 +7,7 @@
 from tensorflow_estimator.python.estimator import model_fn as model_fn_lib
 from tensorflow_estimator.python.estimator import gc
 from tensorflow_estimator.python.estimator.estimator import Estimator
-from tensorflow_estimator.python.estimator.api._v2 import estimator as tfe2
+import estimator_compat as tfe2
 
 fc = tensorflow.feature_column
 
--- a/codebase/model.py
+++ b/codebase/model.py
@@ -1,17 +1,17 @@
 """A TF1-era model_fn: tf.layers, a tf.train optimizer, a TF1 summary."""
-from tensorflow_estimator import estimator as tfe  # TF 2.15: tf.compat.v1.estimator
+import estimator_compat.v1 as tfe  # TF 2.15: tf.compat.v1.estimator
 import tensorflow as tf
 
 
 def model_fn(features, labels, mode, params=None):
   del params
-  net = tf.layers.dense(  # first layer
+  net = tf.compat.v1.layers.dense(  # first layer
       features["x"], 8,
       activation=tf.nn.relu)
-  logits = tf . layers . dense(net, 2)  # spaced-out attribute access
+  logits = tf . compat.v1.layers . dense(net, 2)  # spaced-out attribute access
   loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
-  tf.summary.scalar('loss_copy',loss)   # TF1 summary, 'single' quotes
-  optimizer = (tf.train
+  tf.compat.v1.summary.scalar('loss_copy',loss)   # TF1 summary, 'single' quotes
+  optimizer = (tf.compat.v1.train
                .GradientDescentOptimizer(0.1))  # split over two lines
   train_op = optimizer.minimize(
       loss, global_step=tf.compat.v1.train.get_global_step())
--- a/codebase/train_main.py
+++ b/codebase/train_main.py
@@ -3,6 +3,7 @@
 import tempfile
 
 import numpy as np
+import estimator_compat; estimator_compat.install()
 import tensorflow as tf
 
 import model  # the model_fn, from a local module
'''


@pytest.fixture
def in_fixtures(monkeypatch):
  monkeypatch.chdir(FIXTURES)


@pytest.fixture
def codebase_copy(tmp_path, monkeypatch):
  shutil.copytree(os.path.join(FIXTURES, "codebase"), tmp_path / "codebase")
  monkeypatch.chdir(tmp_path)
  return tmp_path / "codebase"


def _row(finding):
  row = (finding.path, finding.line, finding.col, finding.symbol,
         finding.status)
  return row if finding.cell is None else row + (finding.cell,)


def test_findings_and_statuses(in_fixtures):
  result = scanner.scan(["codebase"])
  assert [_row(f) for f in result.findings] == EXPECTED
  errors = {f.source.path: f.source.error for f in result.files
            if f.source.error}
  assert list(errors) == ["codebase/broken.py"]
  assert "line 3: SyntaxError" in errors["codebase/broken.py"]


def test_notes_say_what_differs_or_what_to_do(in_fixtures):
  for finding in scanner.scan(["codebase"]).findings:
    if finding.status in ("unsupported", "tf-removed"):
      assert "Fix:" in finding.note, finding
    elif finding.status == "differs":
      assert "README.md#" in finding.note, finding
  removed = {f.symbol: f for f in scanner.scan(["codebase/model.py"]).findings}
  assert removed["tf.layers.dense"].replacement == "tf.compat.v1.layers.dense"
  assert removed["tf.summary.scalar"].note.endswith(
      "Fix: tf.compat.v1.summary.scalar.")


def test_tf2_summary_is_no_finding_outside_tf1_code(tmp_path):
  path = tmp_path / "tf2.py"
  path.write_text("import tensorflow as tf\n"
                  "tf.summary.scalar('x', 1.0, step=0)\n"
                  "tf.estimator.RunConfig()\n")
  assert [f.symbol for f in scanner.scan([str(path)]).findings] == [
      "tf.estimator.RunConfig"]


def test_exit_codes(in_fixtures, capsys):
  assert cli.main(["codebase"]) == 1
  assert cli.main(["codebase/train_main.py", "codebase/common.py"]) == 0
  assert cli.main(["codebase/broken.py"]) == 1
  assert cli.main(["codebase/no_such_file.py"]) == 2
  assert cli.main(["codebase", "--fix", "--write"]) == 2
  assert "no such file" in capsys.readouterr().err


def test_console_script_runs_the_scan(in_fixtures, monkeypatch, capsys):
  # setup.py: estimator-compat-migration = migration.__main__:run.
  monkeypatch.setattr(sys, "argv", ["estimator-compat-migration", "scan",
                                    "codebase/common.py"])
  with pytest.raises(SystemExit) as exit_info:
    migration_main.run()
  assert exit_info.value.code == 0
  assert "codebase/common.py\n  5:12  supported    tf.estimator.ModeKeys" in (
      capsys.readouterr().out)


def test_text_report(in_fixtures, capsys):
  cli.main(["codebase"])
  out = capsys.readouterr().out
  assert "codebase/model.py\n  8:9    tf-removed   tf.layers.dense\n" in out
  assert "  cell 4 1:7   tf-removed   tf.contrib.layers.flatten" in out
  assert ("codebase/broken.py\n  not scanned: cannot parse (line 3: "
          "SyntaxError:") in out
  summary = out[out.index("Summary"):]
  assert ("  supported       19\n  differs          2\n  unsupported      2\n"
          "  tf-removed      12\n") in summary
  assert ("files: 9 scanned, 4 run unchanged after estimator_compat.install(), "
          "1 could not be parsed") in summary
  assert "      2  tf-removed   tf.contrib.layers.flatten\n" in summary


def test_json(in_fixtures, tmp_path, capsys):
  report_path = tmp_path / "scan.json"
  assert cli.main(["codebase", "--json", str(report_path)]) == 1
  capsys.readouterr()
  document = json.loads(report_path.read_text())
  first = document["findings"][0]
  assert first == {
      "path": "codebase/aliases.py", "line": 8, "col": 51,
      "symbol": "tensorflow_estimator.python.estimator.gc",
      "status": "unsupported", "note": first["note"]}
  assert [f.get("cell") for f in document["findings"]
          if f["path"].endswith(".ipynb")] == [3, 3, 4]
  summary = document["summary"]
  assert summary["by_status"] == {"supported": 19, "differs": 2,
                                  "unsupported": 2, "tf-removed": 12}
  assert (summary["files"], summary["files_unchanged"]) == (9, 4)
  assert [u["path"] for u in summary["unparsable"]] == ["codebase/broken.py"]
  assert summary["top_unsupported"][0] == {
      "symbol": "tf.contrib.layers.flatten", "status": "tf-removed",
      "count": 2}


def test_fix_prints_the_diff_and_changes_nothing(in_fixtures, capsys):
  before = {name: open(os.path.join("codebase", name), "rb").read()
            for name in os.listdir("codebase")}
  assert cli.main(["codebase", "--fix"]) == 1
  captured = capsys.readouterr()
  assert captured.out == EXPECTED_DIFF
  assert ("codebase/broken.py: not rewritten: cannot parse (line 3"
          in captured.err)
  assert "codebase/notebook.ipynb: not rewritten: notebooks" in captured.err
  assert before == {name: open(os.path.join("codebase", name), "rb").read()
                    for name in os.listdir("codebase")}


def test_write_edits_only_the_changed_tokens(codebase_copy, capsys):
  untouched = ("broken.py", "notebook.ipynb", "contrib_uses.py", "common.py",
               "reexports.py")
  before = {name: (codebase_copy / name).read_bytes() for name in untouched}
  model = (codebase_copy / "model.py").read_bytes()
  assert cli.main(["codebase", "--write"]) == 1  # contrib_uses, gc
  assert "rewrote codebase/model.py" in capsys.readouterr().err
  assert before == {name: (codebase_copy / name).read_bytes()
                    for name in untouched}
  expected = model
  for old, new in (
      (b"from tensorflow_estimator import estimator as tfe",
       b"import estimator_compat.v1 as tfe"),
      (b"tf.layers.dense(", b"tf.compat.v1.layers.dense("),
      (b"tf . layers . dense", b"tf . compat.v1.layers . dense"),
      (b"tf.summary.scalar(", b"tf.compat.v1.summary.scalar("),
      (b"(tf.train\n", b"(tf.compat.v1.train\n")):
    assert expected.count(old) == 1
    expected = expected.replace(old, new)
  assert (codebase_copy / "model.py").read_bytes() == expected
  assert not [f for f in scanner.scan(["codebase/model.py"]).findings
              if f.status == "tf-removed"]


def test_write_keeps_crlf_and_skips_what_it_cannot_parse(tmp_path, capsys):
  crlf = tmp_path / "crlf.py"
  crlf.write_bytes(b"import tensorflow as tf\r\nx = tf.layers.dense\r\n"
                   b"tf.Session()  # stays\r\nlayers = tf.layers\r\n")
  broken = tmp_path / "broken.py"
  broken.write_bytes(b"import tensorflow as tf\nx = tf.layers.dense(\n")
  assert cli.main([str(tmp_path), "--write"]) == 1
  assert crlf.read_bytes() == (b"import tensorflow as tf\r\n"
                               b"x = tf.compat.v1.layers.dense\r\n"
                               b"tf.Session()  # stays\r\n"
                               b"layers = tf.compat.v1.layers\r\n")
  assert broken.read_bytes() == (b"import tensorflow as tf\n"
                                 b"x = tf.layers.dense(\n")
  assert f"{broken}: not rewritten: cannot parse" in capsys.readouterr().err


def _env():
  env = dict(os.environ, PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="2")
  env.pop("TF_CONFIG", None)
  return env


@pytest.mark.slow
def test_fixed_codebase_runs_unchanged(codebase_copy, tmp_path):
  assert cli.main(["codebase", "--write"]) == 1
  run = subprocess.run(
      [sys.executable, str(codebase_copy / "train_main.py"),
       str(tmp_path / "model_dir")],
      capture_output=True, text=True, env=_env(), timeout=300, check=False)
  assert run.returncode == 0, run.stderr[-3000:]
  assert "global_step 3" in run.stdout


@pytest.mark.slow
def test_examples_and_golden_programs_have_nothing_unsupported():
  run = subprocess.run(
      [sys.executable, "-m", "migration", "scan",
       os.path.join(REPO, "examples"),
       os.path.join(REPO, "tests", "golden_programs"), "--json", "-"],
      capture_output=True, text=True, env=_env(), timeout=300, check=False,
      cwd=REPO)
  assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
  document = json.loads(run.stdout)
  assert document["findings"]
  assert not [f for f in document["findings"]
              if f["status"] in ("unsupported", "tf-removed")]


def test_rebinding_and_notebook_magics(tmp_path):
  (tmp_path / "rebind.py").write_text(
      "import tensorflow as tf\n"
      "tf = tf.compat.v1\n"
      "tf.layers.dense\n"
      "tf.estimator.RunConfig\n")
  notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
      {"cell_type": "code", "metadata": {}, "outputs": [],
       "execution_count": None,
       "source": "%%bash\necho this cell is not Python\n"},
      {"cell_type": "code", "metadata": {}, "outputs": [],
       "execution_count": None,
       "source": "import tensorflow as tf\nfiles = !ls\n"
                 "for f in files:\n  %time x = 1\n"
                 "  tf.estimator.RunConfig()\n"}]}
  (tmp_path / "magics.ipynb").write_text(json.dumps(notebook))
  result = scanner.scan([str(tmp_path)])
  assert not [f.source.error for f in result.files if f.source.error]
  assert [(os.path.basename(f.path), f.cell, f.line, f.symbol, f.status)
          for f in result.findings] == [
              ("magics.ipynb", 2, 5, "tf.estimator.RunConfig", "supported"),
              ("rebind.py", None, 3, "tf.compat.v1.layers.dense",
               "supported"),
              ("rebind.py", None, 4, "tf.compat.v1.estimator.RunConfig",
               "supported")]
