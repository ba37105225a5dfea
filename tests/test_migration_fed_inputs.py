"""The `inputs` check compares what each side's engine feeds the model_fn.

A program whose input_fn returns `make_one_shot_iterator(...).get_next()`
once passed every check while the function engine trained on its first batch
only (the checks read inputs in a TF1 graph of their own, not through the
engine). Now the inputs phase records what the model_fn was fed at each
step, so that runtime fails the check.
"""

import migration
from migration import program as program_lib

tf = program_lib.tensorflow_with_estimator()

from estimator_compat.engines.function import graph_input  # pylint: disable=g-import-not-at-top,wrong-import-position
from tests.golden_programs import one_shot as program  # pylint: disable=g-import-not-at-top,wrong-import-position

CHECKS = ["inputs", "trajectory"]


def _compare(tmp_path, name):
  return migration.compare(program.model_fn, program.train_input_fn,
                           eval_input_fn=program.eval_input_fn,
                           predict_input_fn=program.predict_input_fn,
                           old="graph", new="function", checks=CHECKS,
                           report_dir=str(tmp_path / name))


def test_one_shot_program_passes_when_the_engine_feeds_every_batch(tmp_path):
  report = _compare(tmp_path, "fixed")
  assert {r.name: r.verdict for r in report.results} == {
      "inputs": "pass", "trajectory": "pass"}
  # Both sides were fed every batch of the inputs (10 rows by 4 and by 3),
  # then their end.
  assert "3 train, 4 eval, 2 predict batches" in report["inputs"].summary


def test_an_engine_that_repeats_the_first_batch_fails_the_inputs_check(
    tmp_path, monkeypatch):
  # The function engine as it was: tensors were repeated as constants.
  monkeypatch.setattr(graph_input, "classify",
                      lambda built, where: graph_input.CONSTANT)
  report = _compare(tmp_path, "repeating")
  assert report["inputs"].verdict == "FAIL"
  assert report["trajectory"].verdict == "FAIL"
  # The new side was fed 10 train steps (--steps; the old: 3): extra batches.
  assert "train/00003" in str(report["inputs"].numbers["extra"])
