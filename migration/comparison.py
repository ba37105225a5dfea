"""compare() and assert_equivalent(): run both sides and check them."""

import dataclasses
import os
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Optional

from absl import logging

from migration import checks as checks_lib
from migration.recorders import recording_writer as record_lib
from migration import rewrite as rewrite_lib
from migration.recorders import rewrite_recorder
from migration.program import Program
from migration.recorders.recording_reader import Recording
from migration.report import Report

ENGINES = ("graph", "function")
# Steps compared one by one need synchronous updates; PS training applies
# each worker's step whenever it arrives (see docs/migration.md).
STRATEGIES = ("default", "one_device", "mirrored", "multi_worker_mirrored")


def _settings(old: Optional[Recording], steps, seed, eval_batches,
              predict_batches) -> record_lib.Settings:
  asked = {"steps": steps, "seed": seed, "eval_batches": eval_batches,
           "predict_batches": predict_batches}
  if old is None:
    return record_lib.Settings(**{k: v for k, v in asked.items()
                                  if v is not None})
  recorded = old.meta["settings"]
  for key, value in asked.items():
    if value is not None and value != recorded[key]:
      raise ValueError(
          f"The golden in {old.directory} was recorded with {key}="
          f"{recorded[key]}, not {value}. Fix: drop --{key} (the golden's "
          "value is used) or record a new golden with it.")
  return record_lib.Settings(**recorded)


def _check_choices(old: str, new: str, strategy: Optional[str]) -> None:
  if new not in ENGINES:
    raise ValueError(f"new={new!r} is not an engine. Fix: use one of "
                     f"{ENGINES}.")
  if old not in ENGINES and not os.path.isdir(old):
    raise ValueError(f"old={old!r} is neither an engine {ENGINES} nor a "
                     "golden directory. Fix: pass --old=graph, or the --out "
                     "directory of `python -m migration record`.")
  if strategy == "parameter_server":
    raise ValueError(
        "Migration checks compare training step by step, and "
        "parameter-server training is asynchronous: each worker's update "
        "lands whenever it arrives, so no two runs share a trajectory. "
        "Fix: check with --strategy=default or mirrored (the model_fn runs "
        "the same way under PS), and compare PS runs by their final "
        "accuracy (tools/seed_accuracy.py shows how).")
  if strategy is not None and strategy not in STRATEGIES:
    raise ValueError(f"Unknown strategy {strategy!r}. Fix: use one of "
                     f"{STRATEGIES}.")


def compare(model_fn: Callable[..., Any], input_fn: Callable[..., Any], *,
            params: Optional[Dict[str, Any]] = None,
            eval_input_fn: Optional[Callable[..., Any]] = None,
            predict_input_fn: Optional[Callable[..., Any]] = None,
            serving_input_receiver_fn: Optional[Callable[..., Any]] = None,
            new_model_fn: Optional[Callable[..., Any]] = None,
            new_input_fn: Optional[Callable[..., Any]] = None,
            old: str = "graph", new: Any = "function",
            strategy: Optional[str] = None, steps: Optional[int] = None,
            seed: Optional[int] = None, eval_batches: Optional[int] = None,
            predict_batches: Optional[int] = None,
            tolerances: Optional[Dict[str, checks_lib.Tolerance]] = None,
            checks: Optional[List[str]] = None,
            report_dir: Optional[str] = None,
            names: Optional[Dict[str, str]] = None) -> Report:
  """Runs a legacy program on the old and new side and compares them.

  Args:
    model_fn: the legacy model_fn (the old side's, and the new side's unless
      new_model_fn is given).
    input_fn: the training input_fn (also eval/predict input unless given).
    params: the Estimator's params.
    eval_input_fn: input for the eval-metrics check.
    predict_input_fn: input for the predictions and SavedModel checks.
    serving_input_receiver_fn: enables the SavedModel check.
    new_model_fn: the migrated model_fn, when the new side runs other code.
    new_input_fn: the migrated input_fn.
    old: "graph" (the graph engine, here) or a golden directory recorded by
      `python -m migration record` (e.g. on the real Estimator, TF 2.15).
    new: "function" (default) or "graph"; or a TF2 rewrite: a compiled
      tf-keras Model, a factory returning a train_step (migration.rewrite
      says which forms), or a migration.Rewrite. A rewrite is checked
      through a map from the legacy variable names (migration.variable_map).
    strategy: the new side's strategy: default, one_device, mirrored or
      multi_worker_mirrored.
    steps: training steps compared (default 10; a golden's own otherwise).
    seed: the graph seed and model_fn random-op seed (default 42).
    eval_batches: evaluation batches (default 10).
    predict_batches: prediction batches (default 2).
    tolerances: per-check Tolerance overrides, by check name.
    checks: run only these checks (names in migration.checks.NAMES).
    report_dir: where to write report.json, report.txt, the old/ and new/
      TensorBoard runs and both recordings; None keeps nothing.
    names: how the program was named (for the report).

  Returns:
    The Report; `report.passed` says whether every check passed.

  Raises:
    ValueError: a bad choice of old, new, strategy, settings or check.
  """
  rewrite = rewrite_lib.as_rewrite(new)
  if rewrite is not None and (new_model_fn is not None or strategy):
    raise ValueError("A TF2 rewrite is its own model and loop. Fix: drop "
                     "new_model_fn and strategy when new is a rewrite.")
  _check_choices(old, "function" if rewrite is not None else new, strategy)
  unknown = sorted(set(checks or []) | set(tolerances or {}))
  unknown = [c for c in unknown if c not in checks_lib.NAMES]
  if unknown:
    raise ValueError(f"Unknown check(s) {unknown}. Fix: use names from "
                     f"{checks_lib.NAMES}.")
  program = Program(model_fn, input_fn, params, eval_input_fn,
                    predict_input_fn, serving_input_receiver_fn,
                    dict(names or {}))
  new_program = dataclasses.replace(
      program, model_fn=new_model_fn or model_fn,
      input_fn=new_input_fn or input_fn)
  work = report_dir and os.path.join(report_dir, "recordings")
  scratch = None
  if work is None:
    scratch = work = tempfile.mkdtemp(prefix="migration_check_")
  elif os.path.exists(work):
    raise ValueError(f"{report_dir} already holds a report. Fix: pass a new "
                     "--report directory; reports are never overwritten.")
  try:
    golden = None if old in ENGINES else Recording(old)
    settings = _settings(golden, steps, seed, eval_batches, predict_batches)
    if golden is None:
      logging.info("migration: recording the old side (%s engine).", old)
      golden = Recording(record_lib.record(
          program, os.path.join(work, "old"), settings,
          record_lib.Runtime(engine=old)))
    if rewrite is not None:
      logging.info("migration: recording the new side (a TF2 rewrite).")
      fresh = Recording(rewrite_recorder.record(
          new_program, rewrite, golden, os.path.join(work, "new"), settings))
    else:
      logging.info("migration: recording the new side (%s engine, %s).",
                   new, strategy or "default strategy")
      runtime = record_lib.Runtime(engine=new, strategy=strategy)
      fresh = Recording(record_lib.record(
          new_program, os.path.join(work, "new"), settings, runtime,
          start_from=golden.start_checkpoint(),
          evaluate_from=golden.final_checkpoint()))
    report = Report(golden.runtime, fresh.runtime,
                    checks_lib.run_all(golden, fresh, tolerances, checks),
                    dataclasses.asdict(settings))
    if report_dir:
      report.write(report_dir, golden, fresh)
    return report
  finally:
    if scratch:
      shutil.rmtree(scratch, ignore_errors=True)


def assert_equivalent(model_fn: Callable[..., Any],
                      input_fn: Callable[..., Any], **kwargs) -> Report:
  """compare(...), raising AssertionError with the report when a check fails.

  For regression tests (pytest or absltest):

    migration.assert_equivalent(model_fn, input_fn, params=..., steps=5)

  Returns:
    The Report (every check passed).
  """
  report = compare(model_fn, input_fn, **kwargs)
  if not report.passed:
    raise AssertionError("Migration check failed:\n" + report.table())
  return report
