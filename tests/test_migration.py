"""Migration checks as a library: equivalent runs pass, mistakes are caught.

The old side of the planted-mistake tests is recorded once (graph engine);
each mistake is planted on the new side only, the way a migration goes wrong,
and must fail the check that can see it with the cause named.
"""

import json
import os

import numpy as np
import pytest

import migration
from migration import checks
from migration import program as program_lib
from migration.recorders import recording_writer as record
from migration.recorders.recording_reader import Recording

tf = program_lib.tensorflow_with_estimator()

from tests import planted_program as planted  # pylint: disable=g-import-not-at-top,wrong-import-position

GOLDENS = os.path.join(os.path.dirname(__file__), "migration_goldens")
SETTINGS = record.Settings(steps=8)


@pytest.fixture(scope="module")
def old_recording(tmp_path_factory):
  """The correct program on the graph engine, recorded once."""
  out = str(tmp_path_factory.mktemp("planted") / "old")
  program = program_lib.Program(planted.model_fn, planted.input_fn,
                                dict(planted.PARAMS))
  record.record(program, out, SETTINGS, record.Runtime(engine="graph"))
  return out


def _with(**mistake):
  params = dict(planted.PARAMS, **mistake)

  def model_fn(features, labels, mode):
    return planted.model_fn(features, labels, mode, params)

  return model_fn


def _compare(old_dir, **kwargs):
  return migration.compare(planted.model_fn, planted.input_fn,
                           params=dict(planted.PARAMS), old=old_dir,
                           **kwargs)


def test_equivalent_runs_pass_every_check(old_recording, tmp_path):
  report = migration.assert_equivalent(
      planted.model_fn, planted.input_fn, params=dict(planted.PARAMS),
      old=old_recording, report_dir=str(tmp_path / "report"))
  verdicts = {r.name: r.verdict for r in report.results}
  assert verdicts == dict(
      {name: "pass" for name in checks.NAMES}, saved_model="n/a")
  # Dropout and batch norm ran in training: the same masks on both sides.
  assert report["trajectory"].numbers["largest_abs_diff"] == 0.0
  assert report["forward"].numbers["compared"] == 3
  # The report directory: JSON, table, and two TensorBoard runs.
  saved = json.loads((tmp_path / "report" / "report.json").read_text())
  assert saved["passed"] is True
  assert [c["name"] for c in saved["checks"]] == list(checks.NAMES)
  assert "PASSED" in (tmp_path / "report" / "report.txt").read_text()
  for side in ("old", "new"):
    events = list((tmp_path / "report" / side).glob("events.out.tfevents.*"))
    assert len(events) == 1
    losses = [v.simple_value if v.HasField("simple_value") else
              float(tf.make_ndarray(v.tensor))
              for e in tf.compat.v1.train.summary_iterator(str(events[0]))
              for v in e.summary.value if v.tag == "loss"]
    assert len(losses) == SETTINGS.steps


@pytest.mark.parametrize("mistake,check,worst,cause", [
    (dict(dropout_in_eval=True), "eval_metrics", "accuracy", "dropout"),
    (dict(boundary=4), "trajectory", "", "learning-rate schedule off by"),
    (dict(epsilon=1e-7), "trajectory", "", "epsilon"),
    (dict(kernel_initializer="truncated_normal"), "initialization",
     "dense/kernel", "initialized differently"),
    (dict(update_ops=False), "trajectory", "batch_normalization/moving_",
     "UPDATE_OPS"),
], ids=["dropout_in_eval", "lr_schedule_off_by_one", "adam_epsilon",
        "initializer", "missing_update_ops"])
def test_planted_mistake_fails_with_its_cause(old_recording, mistake, check,
                                              worst, cause):
  report = _compare(old_recording, new_model_fn=_with(**mistake))
  assert not report.passed
  result = report[check]
  assert result.verdict == "FAIL", report.table()
  assert result.worst.startswith(worst), result
  assert cause in result.cause, result.cause
  # Only what the mistake changes fails; the rest still matches.
  unaffected = {"initialization": ["structure", "forward", "gradients",
                                   "trajectory", "eval_metrics"],
                "trajectory": ["structure", "initialization", "inputs",
                               "forward", "gradients", "eval_metrics"],
                "eval_metrics": ["structure", "initialization", "forward",
                                 "gradients", "trajectory"]}[check]
  assert all(report[name].passed for name in unaffected), report.table()
  if "boundary" in mistake:
    # Step k runs at global step k-1; global step 5 is past the new boundary
    # (4) but not the old one (5), so step 6 is the first to differ.
    assert result.numbers["first_variable_divergence_step"] == 6
    assert "Updates match until step 5" in result.cause


def test_labels_shuffled_differently_fails_inputs(old_recording):
  report = _compare(old_recording,
                    new_input_fn=planted.labels_shuffled_input_fn)
  result = report["inputs"]
  assert result.verdict == "FAIL"
  assert result.worst == "train batch 0 labels"
  assert "labels are shuffled" in result.cause
  assert report["forward"].cause.startswith("The batches differ already")


def test_structure_names_missing_and_extra_variables(old_recording):
  def renamed(features, labels, mode):
    with tf.compat.v1.variable_scope("tower"):
      return planted.model_fn(features, labels, mode, dict(planted.PARAMS))

  report = _compare(old_recording, new_model_fn=renamed,
                    checks=["structure", "trajectory"])
  result = report["structure"]
  assert result.verdict == "FAIL"
  assert "missing in new: batch_normalization/beta" in result.summary
  assert "extra in new: tower/batch_normalization/beta" in result.summary
  # The old checkpoint does not load into the renamed model: named, not hung.
  assert report["trajectory"].verdict == "FAIL"
  assert "could not run" in report["trajectory"].summary


def test_tolerance_is_settable_per_check(old_recording):
  loose = migration.Tolerance(rtol=1.0, atol=1.0, per_step=True)
  report = _compare(old_recording, new_model_fn=_with(epsilon=1e-7),
                    checks=["trajectory"],
                    tolerances={"trajectory": loose})
  assert report.passed, report.table()
  assert report["trajectory"].numbers["tolerance"] == (
      "rtol 1, atol 1 per step")


def test_bad_choices_name_the_fix(old_recording):
  with pytest.raises(ValueError, match="asynchronous"):
    _compare(old_recording, strategy="parameter_server")
  with pytest.raises(ValueError, match="Unknown check"):
    _compare(old_recording, checks=["speed"])
  with pytest.raises(ValueError, match="recorded with steps=8"):
    _compare(old_recording, steps=3)
  with pytest.raises(ValueError, match="neither an engine"):
    _compare("no/such/dir")


def test_report_dir_is_never_overwritten(old_recording, tmp_path):
  report_dir = str(tmp_path / "report")
  _compare(old_recording, checks=["structure"], report_dir=report_dir)
  with pytest.raises(ValueError, match="never overwritten"):
    _compare(old_recording, checks=["structure"], report_dir=report_dir)


def test_recording_is_never_overwritten(old_recording):
  with pytest.raises(ValueError, match="already holds a recording"):
    record.record(program_lib.Program(planted.model_fn, planted.input_fn),
                  old_recording)


@pytest.mark.parametrize("name", sorted(
    n[:-len(".flags")] for n in os.listdir(GOLDENS) if n.endswith(".flags")))
def test_real_estimator_golden_matches_function_engine(name):
  """Goldens from tools/record_migration_goldens.sh (TF 2.15 Estimator)."""
  golden = os.path.join(GOLDENS, name)
  recorded = Recording(golden)
  assert recorded.meta["tensorflow_version"].startswith("2.15")
  assert recorded.meta["engine"] is None and not recorded.meta["errors"]
  with open(golden + ".flags") as f:
    flags = dict(line.strip()[2:].split("=", 1) for line in f if line.strip())
  refs = {k: flags[k] for k in ("model_fn", "input_fn", "eval_input_fn",
                                "predict_input_fn",
                                "serving_input_receiver_fn") if k in flags}
  program = program_lib.from_references(params=flags.get("params"), **refs)
  report = migration.compare(
      program.model_fn, program.input_fn, params=program.params,
      eval_input_fn=program.eval_input_fn,
      predict_input_fn=program.predict_input_fn,
      serving_input_receiver_fn=program.serving_input_receiver_fn,
      old=golden)
  assert report.passed, report.table()
  assert "2.15" in report.old and "function engine" in report.new
  # --steps, or fewer where the input ends (one_shot: 3 batches).
  assert report["trajectory"].numbers["steps"] == min(
      int(flags["steps"]), len(recorded.batches("train")))
  if "serving_input_receiver_fn" in flags:
    assert report["saved_model"].verdict == "pass"


def test_recording_holds_what_the_issue_names(old_recording):
  recording = Recording(old_recording)
  assert os.path.exists(recording.start_checkpoint() + ".index")
  assert os.path.exists(recording.final_checkpoint() + ".index")
  assert [s for s, _ in recording.meta["losses"]] == list(range(1, 9))
  assert set(recording.meta["eval_metrics"]) == {"accuracy", "loss",
                                                 "global_step"}
  assert sorted(recording.arrays("predictions")) == ["classes", "logits"]
  final = recording.trajectory()[8]
  reader = tf.train.load_checkpoint(recording.final_checkpoint())
  np.testing.assert_array_equal(final["dense/kernel"],
                                reader.get_tensor("dense/kernel"))
