r"""Migration checks from the command line.

  python -m migration record --model_fn=pkg.mod:model_fn \
      --input_fn=pkg.mod:input_fn [--params JSON] [--steps N] --out DIR
  python -m migration check --model_fn=pkg.mod:model_fn \
      --input_fn=pkg.mod:input_fn [--params JSON] [--steps N] \
      [--old graph|GOLDEN_DIR] [--new function] [--strategy mirrored] \
      [--report DIR]
  python -m migration scan PATH... [--json FILE] [--fix | --write]
  python -m migration diff OLD_MODEL_DIR NEW_MODEL_DIR [--rtol R] [--json]
  python -m migration run-both PROGRAM.py [ARGS...] --old-python PATH

`record` runs the program on whatever provides tf.estimator: the real
Estimator on TF <= 2.15 (a golden), else estimator_compat's --engine.
`check` records the old side (or reads a golden), records the new side from
the old side's checkpoints, prints the report table, writes the report
directory (--report, default ./migration_reports/<UTC time>) and exits 0 only
when every check passes, 1 when one fails, 2 on bad flags.
`scan` lists what files use of the Estimator and TF1 and whether it runs
here (see migration/scan); it takes its own arguments.
`diff` compares two model_dirs (see migration/diff); `run-both` runs a
legacy program on the real Estimator and here and diffs the results (see
migration/run_both.py). Both take their own arguments too.
"""

import os
import sys
import time
from typing import Dict, List

from absl import app
from absl import flags
from absl import logging

COMMANDS = ("record", "check")

flags.DEFINE_string("model_fn", None, "The legacy model_fn: pkg.mod:fn or "
                    "path/to/file.py:fn (a script's Estimator runs are "
                    "skipped while it is loaded).")
flags.DEFINE_string("input_fn", None, "The training input_fn (also used for "
                    "evaluation and prediction unless those are given).")
flags.DEFINE_string("params", None, "The Estimator's params as a JSON object.")
flags.DEFINE_string("eval_input_fn", None, "Input for the eval_metrics check.")
flags.DEFINE_string("predict_input_fn", None,
                    "Input for the predictions and saved_model checks.")
flags.DEFINE_string("serving_input_receiver_fn", None,
                    "Export with this receiver for the saved_model check.")
flags.DEFINE_string("new_model_fn", None, "check: the migrated model_fn, "
                    "when the new side runs other code than the old.")
flags.DEFINE_string("new_input_fn", None, "check: the migrated input_fn.")
flags.DEFINE_integer("steps", None, "Training steps compared one by one "
                     "(default 10; with a golden, the golden's).")
flags.DEFINE_integer("seed", None, "Graph seed and model_fn random-op seed "
                     "(default 42).")
flags.DEFINE_integer("eval_batches", None, "Evaluation batches (default 10).")
flags.DEFINE_integer("predict_batches", None,
                     "Prediction batches (default 2).")
flags.DEFINE_string("out", None, "record: the directory to write the "
                    "recording (golden) to; never overwritten.")
flags.DEFINE_enum("engine", None, ["graph", "function"], "record: the engine "
                  "on estimator_compat (default: the real Estimator when "
                  "installed, else function).")
flags.DEFINE_string("old", "graph", "check: 'graph' (the graph engine, in "
                    "this process) or a golden directory from `record`.")
flags.DEFINE_string("new", "function", "check: the engine of the new side "
                    "(function or graph), or a TF2 rewrite: pkg.mod:attr "
                    "naming a compiled tf-keras Model, a factory returning "
                    "a train_step, or a migration.Rewrite.")
flags.DEFINE_enum("strategy", None, ["default", "one_device", "mirrored",
                                     "multi_worker_mirrored",
                                     "parameter_server"],
                  "check: the new side's tf.distribute strategy "
                  "(parameter_server is refused: it is asynchronous).")
flags.DEFINE_integer("logical_cpus", 2, "check: with --strategy=mirrored and "
                     "no GPU, split the CPU into this many devices.")
flags.DEFINE_string("report", None, "check: a new directory for report.json, "
                    "report.txt, the old/ and new/ TensorBoard runs and both "
                    "recordings (default: ./migration_reports/<UTC time>).")
flags.DEFINE_list("checks", None, "check: run only these checks.")
flags.DEFINE_multi_string("tolerance", [], "check: CHECK=RTOL,ATOL, e.g. "
                          "trajectory=1e-4,1e-5 (repeatable).")

FLAGS = flags.FLAGS


class UsageError(ValueError):
  pass


def _tolerances(values: List[str]) -> Dict[str, object]:
  from migration.checks.result import DEFAULT_TOLERANCES, Tolerance  # pylint: disable=g-import-not-at-top
  parsed = {}
  for value in values:
    name, _, numbers = value.partition("=")
    parts = numbers.split(",")
    if name not in DEFAULT_TOLERANCES or len(parts) != 2:
      raise UsageError(f"--tolerance={value} is not CHECK=RTOL,ATOL with "
                       f"CHECK in {sorted(DEFAULT_TOLERANCES)}. Fix: e.g. "
                       "--tolerance=trajectory=1e-4,1e-5.")
    try:
      rtol, atol = float(parts[0]), float(parts[1])
    except ValueError as e:
      raise UsageError(f"--tolerance={value}: {e}") from e
    parsed[name] = Tolerance(rtol, atol,
                             DEFAULT_TOLERANCES[name].per_step)
  return parsed


def _program():
  from migration import program as program_lib  # pylint: disable=g-import-not-at-top
  for name in ("model_fn", "input_fn"):
    if not FLAGS[name].value:
      raise UsageError(f"--{name} is required. Fix: e.g. "
                       f"--{name}=my_package.my_module:{name}.")
  return program_lib.from_references(
      FLAGS.model_fn, FLAGS.input_fn, FLAGS.params, FLAGS.eval_input_fn,
      FLAGS.predict_input_fn, FLAGS.serving_input_receiver_fn)


def _record() -> int:
  from migration.recorders import recording_writer as record_lib  # pylint: disable=g-import-not-at-top
  if not FLAGS.out:
    raise UsageError("--out is required for record. Fix: --out=DIR, a new "
                     "directory for the golden.")
  program = _program()
  settings = record_lib.Settings(**{
      k: FLAGS[k].value for k in ("steps", "seed", "eval_batches",
                                  "predict_batches")
      if FLAGS[k].value is not None})
  runtime = record_lib.Runtime(engine=FLAGS.engine)
  record_lib.record(program, FLAGS.out, settings, runtime)
  from migration.recorders.recording_reader import Recording  # pylint: disable=g-import-not-at-top
  recording = Recording(FLAGS.out)
  errors = recording.meta.get("errors", {})
  print(f"recorded {recording.runtime} -> {FLAGS.out}")
  for phase, error in sorted(errors.items()):
    print(f"  {phase} failed: {error}")
  return 1 if errors else 0


def _configure_devices() -> None:
  if FLAGS.strategy != "mirrored" or FLAGS.logical_cpus < 2:
    return
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  if tf.config.list_physical_devices("GPU"):
    return
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * FLAGS.logical_cpus)


def _check() -> int:
  from migration import comparison  # pylint: disable=g-import-not-at-top
  tolerances = _tolerances(FLAGS.tolerance)
  program = _program()
  from migration import program as program_lib  # pylint: disable=g-import-not-at-top
  new_model_fn = FLAGS.new_model_fn and program_lib.load_attr(
      FLAGS.new_model_fn)
  new_input_fn = FLAGS.new_input_fn and program_lib.load_attr(
      FLAGS.new_input_fn)
  new = FLAGS.new
  if new not in ("function", "graph"):
    if ":" not in new:
      raise UsageError(f"--new={new} is neither an engine (function, graph) "
                       "nor a rewrite. Fix: --new=pkg.mod:rewrite.")
    new = program_lib.load_attr(new)
  _configure_devices()
  report_dir = FLAGS.report or os.path.join(
      "migration_reports", time.strftime("%Y%m%d-%H%M%S", time.gmtime()))
  strategy = None if FLAGS.strategy in (None, "default") else FLAGS.strategy
  report = comparison.compare(
      program.model_fn, program.input_fn, params=program.params,
      eval_input_fn=program.eval_input_fn,
      predict_input_fn=program.predict_input_fn,
      serving_input_receiver_fn=program.serving_input_receiver_fn,
      new_model_fn=new_model_fn or None, new_input_fn=new_input_fn or None,
      old=FLAGS.old, new=new, strategy=strategy, steps=FLAGS.steps,
      seed=FLAGS.seed, eval_batches=FLAGS.eval_batches,
      predict_batches=FLAGS.predict_batches, tolerances=tolerances,
      checks=FLAGS.checks, report_dir=report_dir, names=program.names)
  print(report.table())
  print(f"\nreport: {os.path.join(report_dir, 'report.json')}; loss "
        f"curves: tensorboard --logdir {report_dir}")
  return 0 if report.passed else 1


def main(argv: List[str]) -> int:
  if len(argv) != 2 or argv[1] not in COMMANDS:
    print(f"usage: python -m migration {{{'|'.join(COMMANDS)}}} --model_fn="
          "pkg.mod:fn --input_fn=pkg.mod:fn [flags]; --helpfull lists the "
          "flags.\n       python -m migration scan PATH... [--json FILE] "
          "[--fix | --write]\n       python -m migration diff OLD_MODEL_DIR "
          "NEW_MODEL_DIR [flags]\n       python -m migration run-both "
          "PROGRAM.py [ARGS...] --old-python PATH", file=sys.stderr)
    return 2
  # Our flags are parsed. estimator_compat.install() reads --strategy from
  # sys.argv for legacy programs; here --strategy is the new side's only.
  sys.argv[1:] = []
  try:
    return _record() if argv[1] == "record" else _check()
  except (UsageError, ValueError) as e:
    logging.error("%s", e)
    print(f"error: {e}", file=sys.stderr)
    return 2


def run() -> None:
  if sys.argv[1:2] == ["scan"]:
    from migration.scan import cli  # pylint: disable=g-import-not-at-top
    cli.run(sys.argv[2:])
  if sys.argv[1:2] == ["diff"]:
    from migration.diff import cli as diff_cli  # pylint: disable=g-import-not-at-top
    diff_cli.run(sys.argv[2:])
  if sys.argv[1:2] == ["run-both"]:
    from migration import run_both  # pylint: disable=g-import-not-at-top
    run_both.run(sys.argv[2:])
  app.run(main)


if __name__ == "__main__":
  run()
