"""`migration diff`: model_dirs of the real Estimator and of both engines.

The real Estimator's model_dir comes from tests/run_both_program.py run in
the TF 2.15 virtualenv ($ESTIMATOR_COMPAT_OLD_PYTHON, else
~/.cache/estimator-compat/tf215-venv/bin/python); tests that need it are
skipped when that interpreter is missing. Each engine runs the same program
here from the real run's model.ckpt-0, as run-both does.
"""

import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.core.util import event_pb2

import estimator_compat
import migration
from migration.diff import cli as diff_cli
from migration.diff import KINDS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "tests", "run_both_program.py")
OLD_PYTHON = os.environ.get("ESTIMATOR_COMPAT_OLD_PYTHON") or os.path.expanduser(
    "~/.cache/estimator-compat/tf215-venv/bin/python")
NEEDS_OLD = pytest.mark.skipif(
    not os.path.exists(OLD_PYTHON),
    reason=f"no TF 2.15 interpreter with the real Estimator at {OLD_PYTHON} "
    "(set ESTIMATOR_COMPAT_OLD_PYTHON)")


def _seed(source_dir: str, model_dir: str) -> None:
  """Puts source_dir's model.ckpt-0 (only) into a new model_dir."""
  os.makedirs(model_dir)
  for path in glob.glob(os.path.join(source_dir, "model.ckpt-0.*")):
    if not path.endswith(".meta"):
      shutil.copy(path, model_dir)
  with open(os.path.join(model_dir, "checkpoint"), "w") as f:
    f.write('model_checkpoint_path: "model.ckpt-0"\n'
            'all_model_checkpoint_paths: "model.ckpt-0"\n')


def _run_here(model_dir: str, engine: str) -> None:
  from tests import run_both_program  # pylint: disable=g-import-not-at-top
  estimator_compat.install()
  saved = os.environ.get("ESTIMATOR_COMPAT_ENGINE")
  os.environ["ESTIMATOR_COMPAT_ENGINE"] = engine
  try:
    run_both_program.run(model_dir)
  finally:
    if saved is None:
      del os.environ["ESTIMATOR_COMPAT_ENGINE"]
    else:
      os.environ["ESTIMATOR_COMPAT_ENGINE"] = saved


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
  """{'real' (when the TF 2.15 venv exists), 'function', 'graph': model_dir}.

  The engines start from the real run's model.ckpt-0, or without it the
  graph engine from the function engine's.
  """
  root = tmp_path_factory.mktemp("diff_dirs")
  found = {}
  if os.path.exists(OLD_PYTHON):
    found["real"] = str(root / "real")
    done = subprocess.run(
        [OLD_PYTHON, PROGRAM, f"--model_dir={found['real']}"],
        check=False, capture_output=True, text=True, timeout=600,
        env={k: v for k, v in os.environ.items()
             if k != "TF_USE_LEGACY_KERAS"})
    assert done.returncode == 0, done.stderr[-3000:]
  for engine in ("function", "graph"):
    found[engine] = str(root / engine)
    if "real" in found:
      _seed(found["real"], found[engine])
    elif engine == "graph":
      _seed(found["function"], found[engine])
    _run_here(found[engine], engine)
  return found


@pytest.fixture
def copy_of(dirs, tmp_path):
  def copy(name):
    target = str(tmp_path / f"{name}_copy")
    shutil.copytree(dirs[name], target)
    return target
  return copy


def _found(diff):
  return {(d.kind, d.where) for d in diff.differences}


# --- same runs: no differences ---------------------------------------------


def test_engines_agree_with_each_other(dirs):
  diff = migration.diff_model_dirs(dirs["function"], dirs["graph"])
  assert diff.ok, diff.format_table()
  assert dict(diff.to_json()["compared"]) == {
      "checkpoints": 3, "event tags": 5, "exports": 1}


@NEEDS_OLD
@pytest.mark.parametrize("engine", ["function", "graph"])
def test_engine_matches_the_real_estimator_exactly(dirs, engine):
  diff = migration.diff_model_dirs(dirs["real"], dirs[engine])
  assert diff.ok, diff.format_table()
  assert "SAME: no differences." in diff.format_table()


# --- planted differences, each named ----------------------------------------


def _rewrite_checkpoint(prefix: str, name: str, change) -> None:
  reader = tf.train.load_checkpoint(prefix)
  values = {n: reader.get_tensor(n)
            for n in reader.get_variable_to_shape_map()}
  values[name] = change(values[name])
  with tf.Graph().as_default():
    variables = {n: tf.compat.v1.Variable(v, name=n.replace("/", "_"))
                 for n, v in values.items()}
    saver = tf.compat.v1.train.Saver(variables)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      saver.save(session, prefix, write_meta_graph=False, write_state=False)


def _drop_event_tag(events_dir: str, tag: str) -> None:
  for path in glob.glob(os.path.join(events_dir, "events.out.tfevents.*")):
    events = []
    for record in tf.data.TFRecordDataset(path):
      event = event_pb2.Event.FromString(record.numpy())
      kept = [v for v in event.summary.value if v.tag != tag]
      del event.summary.value[:]
      event.summary.value.extend(kept)
      events.append(event.SerializeToString())
    with tf.io.TFRecordWriter(path) as writer:
      for event in events:
        writer.write(event)


def _export(model_dir: str) -> str:
  return sorted(glob.glob(os.path.join(model_dir, "export", "exporter", "*")))[0]


def _planted(model_dir: str, plant: str):
  """Plants one difference in model_dir; returns the expected (kind, where)s."""
  if plant == "variable_value":
    _rewrite_checkpoint(os.path.join(model_dir, "model.ckpt-10"),
                        "hidden/bias", lambda v: v + np.float32(0.5))
    return {("variable_value", "model.ckpt-10: hidden/bias")}
  if plant == "eval_tag":
    _drop_event_tag(os.path.join(model_dir, "eval"), "accuracy")
    return {("event_tag_missing", "eval: accuracy"), ("eval_result", "eval")}
  if plant == "extra_export":
    parent, name = os.path.split(_export(model_dir))
    shutil.copytree(os.path.join(parent, name),
                    os.path.join(parent, str(int(name) + 1)))
    return {("export_missing", "export/exporter/#2")}
  if plant == "signature_dtype":
    path = os.path.join(_export(model_dir), "saved_model.pb")
    proto = saved_model_pb2.SavedModel()
    with open(path, "rb") as f:
      proto.ParseFromString(f.read())
    signature = proto.meta_graphs[0].signature_def["serving_default"]
    signature.inputs["x"].dtype = types_pb2.DT_DOUBLE
    with open(path, "wb") as f:
      f.write(proto.SerializeToString())
    return {("signature",
             "export/exporter/#1: serve/serving_default: inputs[x]")}
  if plant == "start":
    _rewrite_checkpoint(os.path.join(model_dir, "model.ckpt-0"),
                        "logits/kernel", lambda v: v * np.float32(2))
    return {("start", "model.ckpt-0")}
  raise ValueError(plant)


@pytest.mark.parametrize("engine", ["function", "graph"])
def test_each_engine_trains_from_the_first_checkpoint_it_is_given(
    dirs, tmp_path, engine):
  # What run-both relies on: a model_dir holding only a model.ckpt-0 is
  # restored, not re-initialized, and training continues from its values.
  given = str(tmp_path / "given")
  _seed(dirs[engine], given)
  _rewrite_checkpoint(os.path.join(given, "model.ckpt-0"), "logits/kernel",
                      lambda v: v * np.float32(2))
  scaled = tf.train.load_checkpoint(os.path.join(given, "model.ckpt-0"))
  model_dir = str(tmp_path / "model")
  _seed(given, model_dir)
  _run_here(model_dir, engine)
  np.testing.assert_array_equal(
      tf.train.load_checkpoint(os.path.join(model_dir, "model.ckpt-0"))
      .get_tensor("logits/kernel"), scaled.get_tensor("logits/kernel"))
  kinds = {d.kind for d in migration.diff_model_dirs(
      dirs[engine], model_dir).differences}
  assert {"start", "variable_value", "event_value"} <= kinds


PLANTS = ["variable_value", "eval_tag", "extra_export", "signature_dtype",
          "start"]


@pytest.mark.parametrize("plant", PLANTS)
def test_planted_difference_in_an_engine_model_dir_is_named(
    dirs, copy_of, plant):
  planted = copy_of("function")
  expected = _planted(planted, plant)
  diff = migration.diff_model_dirs(dirs["graph"], planted)
  assert not diff.ok
  assert _found(diff) == expected, diff.format_table()
  table = diff.format_table()
  for kind, where in expected:
    assert kind in table and where.split(": ")[-1] in table


@NEEDS_OLD
@pytest.mark.parametrize("plant", PLANTS[:4])
def test_planted_difference_in_a_real_estimator_model_dir_is_named(
    dirs, copy_of, plant):
  planted = copy_of("real")
  expected = _planted(planted, plant)
  diff = migration.diff_model_dirs(planted, dirs["function"])
  assert _found(diff) == expected, diff.format_table()


def test_details_say_what_differs(dirs, copy_of):
  planted = copy_of("function")
  _planted(planted, "variable_value")
  _planted(planted, "signature_dtype")
  _planted(planted, "eval_tag")
  details = {d.kind: d.detail for d in
             migration.diff_model_dirs(dirs["graph"], planted).differences}
  assert "4 of 4 values differ" in details["variable_value"]
  assert "|diff| 0.5" in details["variable_value"]
  assert details["signature"] == "dtype old float32 vs new float64"
  assert details["event_tag_missing"].startswith(
      "written on the old side only (steps [10])")
  assert details["eval_result"].startswith("accuracy only old")


def test_start_difference_explains_trained_differences(dirs, copy_of):
  planted = copy_of("function")
  _planted(planted, "start")
  diff = migration.diff_model_dirs(dirs["graph"], planted)
  assert "did not start from the same first checkpoint" in (
      diff.differences[0].detail)
  assert any("did not start from the same" in n for n in diff.notes)
  assert not migration.diff_model_dirs(dirs["graph"], dirs["function"]).notes


def test_tolerance_and_integers(dirs, copy_of):
  planted = copy_of("function")
  _rewrite_checkpoint(os.path.join(planted, "model.ckpt-10"), "hidden/bias",
                      lambda v: v * np.float32(1 + 1e-5))
  _rewrite_checkpoint(os.path.join(planted, "model.ckpt-5"), "global_step",
                      lambda v: v + 1)
  exact = _found(migration.diff_model_dirs(dirs["graph"], planted))
  assert exact == {("variable_value", "model.ckpt-10: hidden/bias"),
                   ("variable_value", "model.ckpt-5: global_step")}
  loose = migration.diff_model_dirs(dirs["graph"], planted, rtol=1e-4)
  assert _found(loose) == {("variable_value", "model.ckpt-5: global_step")}
  huge = migration.diff_model_dirs(dirs["graph"], planted, atol=1e6)
  assert _found(huge) == {("variable_value", "model.ckpt-5: global_step")}


def test_checkpoints_state_events_and_layout(dirs, copy_of):
  planted = copy_of("function")
  for path in glob.glob(os.path.join(planted, "model.ckpt-5.*")):
    os.remove(path)
  with open(os.path.join(planted, "checkpoint"), "w") as f:
    f.write('model_checkpoint_path: "model.ckpt-10"\n'
            'all_model_checkpoint_paths: "model.ckpt-0"\n'
            'all_model_checkpoint_paths: "model.ckpt-10"\n')
  with open(os.path.join(planted, "notes.txt"), "w") as f:
    f.write("x")
  _drop_event_tag(planted, "mean_logit")
  found = _found(migration.diff_model_dirs(dirs["graph"], planted))
  assert found == {("checkpoints", "."), ("checkpoint_state", "checkpoint"),
                   ("event_tag_missing", ".: mean_logit"),
                   ("layout", "notes.txt")}


def test_ignore_patterns(dirs, copy_of):
  planted = copy_of("function")
  expected = _planted(planted, "eval_tag")
  assert _found(migration.diff_model_dirs(
      dirs["graph"], planted, ignore=("eval_result",))) == expected - {
          ("eval_result", "eval")}
  assert migration.diff_model_dirs(dirs["graph"], planted,
                                   ignore=("*eval*",)).ok


def test_kinds_are_the_documented_ones():
  assert KINDS == ("start", "checkpoints", "checkpoint_state",
                   "variable_missing", "variable_shape", "variable_dtype",
                   "variable_value", "event_tag_missing", "event_steps",
                   "event_value", "eval_result", "export_missing",
                   "signature", "export_output", "layout")


# --- command line -----------------------------------------------------------


def test_cli_exit_codes_json_and_tensorboard(dirs, copy_of, tmp_path, capsys):
  assert diff_cli.main([dirs["function"], dirs["graph"]]) == 0
  assert "SAME: no differences." in capsys.readouterr().out
  planted = copy_of("function")
  _planted(planted, "extra_export")
  board = str(tmp_path / "board")
  assert diff_cli.main([dirs["graph"], planted, "--json",
                        f"--tensorboard={board}"]) == 1
  document = json.loads(capsys.readouterr().out)
  assert document["ok"] is False
  assert document["differences"] == [{
      "kind": "export_missing", "where": "export/exporter/#2",
      "detail": document["differences"][0]["detail"]}]
  for side in ("old", "new"):
    assert glob.glob(os.path.join(board, side, "events.out.tfevents.*"))
    assert glob.glob(os.path.join(board, side, "eval", "events.out.*"))
  assert diff_cli.main([dirs["graph"], str(tmp_path / "missing")]) == 2
  assert "is not a directory" in capsys.readouterr().err
  assert diff_cli.main([dirs["graph"]]) == 2


@pytest.mark.slow
def test_python_dash_m_migration_diff(dirs):
  done = subprocess.run(
      [sys.executable, "-m", "migration", "diff",
       dirs["function"], dirs["graph"], "--json"],
      capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
      env=dict(os.environ, PYTHONPATH=ROOT))
  assert done.returncode == 0, done.stderr[-2000:]
  assert json.loads(done.stdout)["ok"] is True


@NEEDS_OLD
@pytest.mark.slow
def test_diff_runs_on_tf_2_15_too(dirs, copy_of):
  planted = copy_of("function")
  _planted(planted, "extra_export")
  env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
  env["PYTHONPATH"] = ROOT
  codes = []
  for new in (dirs["graph"], planted):
    done = subprocess.run(
        [OLD_PYTHON, "-m", "migration", "diff", dirs["real"], new, "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=600, check=False,
        env=env)
    codes.append((done.returncode, [
        d["kind"] for d in json.loads(done.stdout or "{}").get(
            "differences", [])]))
  assert codes == [(0, []), (1, ["export_missing"])], done.stderr[-3000:]
