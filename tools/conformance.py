"""Runs the real Estimator's own tests against estimator_compat.

Usage (see tools/conformance.sh):

  python tools/conformance.py CHECKOUT [--engine all|default|graph|function]

CHECKOUT is a checkout of github.com/tensorflow/estimator at tag v2.15.0.
Its test files are copied, unchanged, to a temporary directory and run with
pytest after `estimator_compat.install()`, once per engine: the default
engine (nothing set: what users get, rerouting to the graph engine where the
function engine cannot be exact), then each engine forced through
$ESTIMATOR_COMPAT_ENGINE. Only the counted tests run: those that pass on the
real Estimator (tools/conformance_reference_passing.txt) minus those that
need the real package's private names (tools/conformance_exclusions.txt) and
tf.test.TestCase's own helpers that pytest collects (TESTCASE_HELPERS).
Each test has a time limit; a test that hangs or crashes the process is
recorded as such and the file carries on after it.

`--reference` runs the same files on the real Estimator instead (give the
Python of a TF 2.15 + tensorflow-estimator 2.15 environment with --python)
and writes the tests that pass there to --write-reference.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Set

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
TEST_DIR = os.path.join("tensorflow_estimator", "python", "estimator")
TEST_FILES = ("estimator_test.py", "model_fn_test.py", "run_config_test.py",
              "training_test.py", "hooks/hooks_test.py",
              "export/export_test.py", "early_stopping_test.py",
              "keras_test.py", "tpu/tpu_config_test.py",
              "head/base_head_test.py",
              "head/binary_class_head_test.py",
              "head/multi_class_head_test.py", "head/multi_head_test.py",
              "head/multi_label_head_test.py",
              "head/regression_head_test.py", "canned/dnn_test_fc_v2.py",
              "canned/dnn_estimator_test.py",
              "canned/dnn_linear_combined_test.py",
              "canned/dnn_linear_combined_estimator_test.py")
# Helper modules the test files import (copied with them; see
# conformance_plugin.SUPPORT_MODULES).
SUPPORT_FILES = ("canned/dnn_testing_utils.py",
                 "canned/linear_testing_utils.py")
# The Linear and Baseline canned estimators' tests (issue 14). Their
# canned/v1/*_test_v1.py twins run under TF1 behaviour (CANNED_V1_FILES).
TEST_FILES += ("canned/linear_test.py", "canned/linear_estimator_test.py",
               "canned/baseline_test.py", "canned/baseline_estimator_test.py")
# The canned RNN estimators' tests (issue 24).
TEST_FILES += ("canned/rnn_test.py",)
# Issue 24: LinearSDCA's tests (the SDCA estimators, its model and table)
# and KMeans's.
TEST_FILES += ("canned/linear_optimizer/python/sdca_test.py",
               "canned/linear_optimizer/python/utils/sdca_ops_test.py",
               "canned/linear_optimizer/python/utils/"
               "sharded_mutable_dense_hashtable_test.py",
               "canned/kmeans_test.py")
# Issue 24: the small public-API files (exporters, extenders, the numpy and
# pandas input_fns, parsing_utils, the session-run hooks, the Keras premade
# models, object-based checkpoints).
TEST_FILES += ("exporter_test.py", "extenders_test.py",
               "inputs/numpy_io_test.py", "inputs/pandas_io_test.py",
               "canned/parsing_utils_test.py",
               "hooks/basic_session_run_hooks_test.py",
               "keras_premade_model_test.py", "object_checkpointing_test.py")
SUPPORT_FILES += ("hooks/fake_summary_writer.py",)
# Files whose every test is `run_v1_only` (the numpy and pandas input_fns'
# queue-runner tests): under TF2 behaviour all skip, on the real Estimator
# too, so they run under TF1 behaviour (tf.compat.v1.disable_v2_behavior()
# before the file is imported), on both sides.
TF1_FILES = ("inputs/numpy_io_test.py", "inputs/pandas_io_test.py")
# Issue 24: the distribution strategy files (CPU strategies only: the
# real Estimator runs them on a machine without accelerators too).
# canned/canned_estimator_ds_integration_test.py passes nothing there (its
# CPU cases call inspect.getargspec, gone from Python 3.11).
TEST_FILES += ("keras_distribute_strategy_test.py",
               "distribute_strategy_estimator_integration_test.py",
               "distribute_strategy_estimator_training_test.py")
# Issue 24: the TPU estimator tests that pass without a TPU on the real
# Estimator (CPU). The other tpu/*_test.py files pass nothing there: they
# need a TPU system, or (tpu_enqueue_sequence_test) tensorflow.contrib.
TEST_FILES += ("tpu/autotuning_iterations_per_loop_test.py",
               "tpu/error_handling_test.py",
               "tpu/tpu_estimator_embedding_test.py",
               "tpu/tpu_estimator_model_parallelism_test.py",
               "tpu/tpu_estimator_signals_test.py",
               "tpu/tpu_estimator_test.py")
# Issue 24: the TF1 canned estimators' tests, run under TF1 behaviour (their
# classes are run_v1_only, as above), with their helper modules.
CANNED_V1_FILES = ("canned/v1/baseline_estimator_test_v1.py",
                   "canned/v1/baseline_test_v1.py",
                   "canned/v1/dnn_estimator_test_v1.py",
                   "canned/v1/dnn_linear_combined_estimator_test_v1.py",
                   "canned/v1/dnn_linear_combined_test_v1.py",
                   "canned/v1/dnn_test_fc_v1_v1.py",
                   "canned/v1/dnn_test_fc_v2_v1.py",
                   "canned/v1/linear_estimator_test_v1.py",
                   "canned/v1/linear_test_v1.py")
TEST_FILES += CANNED_V1_FILES
TF1_FILES += CANNED_V1_FILES
SUPPORT_FILES += ("canned/v1/dnn_testing_utils_v1.py",
                  "canned/v1/linear_testing_utils_v1.py")
REFERENCE_FILE = os.path.join(TOOLS, "conformance_reference_passing.txt")
EXCLUSIONS_FILE = os.path.join(TOOLS, "conformance_exclusions.txt")
TAG = "v2.15.0"
# Methods of tf.test.TestCase that pytest collects as tests in every class of
# every file: helpers of the test case, not tests of the file.
TESTCASE_HELPERS = ("test_session",)
# The columns: the default engine (no $ESTIMATOR_COMPAT_ENGINE), then each
# engine forced.
ENGINES = ("default", "graph", "function")
MAX_RESTARTS = 60


def read_id_file(path: str) -> Dict[str, str]:
  """Test ids of a list file: `ID [reason...]` lines, `#` comments."""
  ids = {}
  with open(path) as f:
    for line in f:
      line = line.strip()
      if not line or line.startswith("#"):
        continue
      test_id, _, reason = line.partition(" ")
      ids[test_id] = reason.strip()
  return ids


def check_checkout(checkout: str) -> str:
  """The checkout's test directory; fails with the fix if it is not one."""
  test_dir = os.path.join(checkout, TEST_DIR)
  missing = [f for f in TEST_FILES
             if not os.path.isfile(os.path.join(test_dir, f))]
  if missing:
    sys.exit(f"conformance: {checkout} is not a tensorflow/estimator checkout "
             f"(missing {', '.join(missing)} under {TEST_DIR}). Fix: "
             f"git clone https://github.com/tensorflow/estimator && "
             f"git -C estimator checkout {TAG}")
  if os.path.isdir(os.path.join(checkout, ".git")) or os.path.isfile(
      os.path.join(checkout, ".git")):
    described = subprocess.run(
        ["git", "-C", checkout, "describe", "--tags", "--always"],
        capture_output=True, text=True, check=False).stdout.strip()
    if described != TAG:
      print(f"conformance: warning: {checkout} is at {described or '?'}, not "
            f"{TAG}; the committed lists were made at {TAG}.", file=sys.stderr)
  return test_dir


def copy_tests(test_dir: str, work: str) -> None:
  for name in TEST_FILES + SUPPORT_FILES:
    os.makedirs(os.path.join(work, os.path.dirname(name)), exist_ok=True)
    shutil.copy(os.path.join(test_dir, name), os.path.join(work, name))


def _read_records(path: str) -> List[dict]:
  if not os.path.exists(path):
    return []
  with open(path) as f:
    return [json.loads(line) for line in f if line.strip()]


def run_file(python: str, work: str, name: str, env: Dict[str, str],
             only: Optional[Set[str]], timeout: float, out_dir: str,
             tag: str) -> Dict[str, dict]:
  """Runs one test file to the end, restarting after a hang or crash.

  Returns:
    {test id: {"outcome", "error", "seconds"}} for each test that ran.
  """
  stem = f"{tag}-{name.replace('/', '_')}"
  results_path = os.path.join(out_dir, stem + ".jsonl")
  skip_path = os.path.join(out_dir, stem + ".skip")
  only_path = os.path.join(out_dir, stem + ".only")
  if only is not None:
    with open(only_path, "w") as f:
      f.write("\n".join(sorted(t for t in only if t.startswith(name + "::"))))
  if name in TF1_FILES:
    env = dict(env, CONFORMANCE_TF1="1")
  results: Dict[str, dict] = {}
  collect_errors: List[str] = []
  for _ in range(MAX_RESTARTS):
    with open(skip_path, "w") as f:
      f.write("\n".join(sorted(results)))
    run_env = dict(env, CONFORMANCE_RESULTS=results_path,
                   CONFORMANCE_SKIP=skip_path,
                   CONFORMANCE_TIMEOUT=str(timeout))
    if only is not None:
      run_env["CONFORMANCE_ONLY"] = only_path
    before = len(_read_records(results_path))
    with open(os.path.join(out_dir, stem + ".log"), "a") as log:
      subprocess.run(
          # A class that fails to collect (one reading a private name in
          # its __init__) must not stop the file's other classes.
          [python, "-m", "pytest", "-p", "no:cacheprovider", "-p",
           "conformance_plugin", "-q", "--continue-on-collection-errors",
           "--rootdir", work, name],
          cwd=work, env=run_env, stdout=log, stderr=subprocess.STDOUT,
          check=False)
    records = _read_records(results_path)[before:]
    started = None
    for record in records:
      if "start" in record:
        started = record
      elif "id" in record:
        results[record["id"]] = record
        started = None
    collect_errors += [r["error"] for r in records if "collect_error" in r]
    if any(r.get("end") for r in records) or started is None:
      break  # Finished, or died before a test started: nothing to resume.
    elapsed = time.time() - started["time"]
    outcome = "timeout" if elapsed >= timeout - 1 else "crash"
    results[started["start"]] = {
        "id": started["start"], "outcome": outcome,
        "error": f"{outcome} after {elapsed:.0f}s (stacks in {stem}.jsonl.hang)",
        "seconds": round(elapsed, 2)}
  if only is not None:
    reason = (collect_errors[-1].strip().splitlines()[-1][:300]
              if collect_errors else "not collected")
    for test_id in only:
      if test_id.startswith(name + "::") and test_id not in results:
        results[test_id] = {"id": test_id, "outcome": "not run",
                            "error": reason, "seconds": 0}
  return results


def counted_tests(files: List[str]) -> Set[str]:
  """Tests passing on the real Estimator, minus the excluded, in `files`."""
  reference = set(read_id_file(REFERENCE_FILE))
  excluded = set(read_id_file(EXCLUSIONS_FILE))
  return {t for t in reference - excluded
          if t.split("::")[0] in files
          and t.split("::")[-1] not in TESTCASE_HELPERS}


def engine_env(env: Dict[str, str], engine: str) -> Dict[str, str]:
  """`env` for one column: the engine forced, or none set for "default"."""
  env = dict(env)
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  if engine != "default":
    env["ESTIMATOR_COMPAT_ENGINE"] = engine
  return env


def engines_of(choice: str) -> List[str]:
  """The engines an --engine value runs, in column order."""
  return list(ENGINES) if choice == "all" else [choice]


def print_table(counted: Set[str], by_engine: Dict[str, Dict[str, dict]],
                files: List[str]):
  """Per file and total: counted tests and how many pass on each engine."""
  engines = list(by_engine)
  header = f"{'file':<24}{'counted':>8}" + "".join(
      f"{e + ' pass':>16}" for e in engines)
  print(header)
  rows = [(name, [t for t in counted if t.startswith(name + "::")])
          for name in files] + [("total", sorted(counted))]
  for name, ids in rows:
    cells = []
    for engine in engines:
      passed = sum(by_engine[engine].get(t, {}).get("outcome") == "passed"
                   for t in ids)
      share = 100.0 * passed / len(ids) if ids else 0.0
      cells.append(f"{passed:>8} ({share:3.0f}%)")
    print(f"{name:<24}{len(ids):>8}" + "".join(f"{c:>16}" for c in cells))


def run_reference(args, work: str, out_dir: str,
                  base_env: Dict[str, str]) -> None:
  """Runs the files on the real Estimator and writes the passing tests."""
  # The real Estimator only: our package must not be importable.
  env = dict(base_env, PYTHONPATH=TOOLS)
  passed = []
  for name in args.files:
    results = run_file(args.python, work, name, env, None, args.timeout,
                       out_dir, "reference")
    ids = [t for t, r in results.items() if r["outcome"] == "passed"]
    print(f"{name}: {len(ids)} pass")
    passed += ids
  if os.path.exists(args.write_reference):  # Keep the other files' ids.
    passed += [t for t in read_id_file(args.write_reference)
               if t.split("::")[0] not in args.files]
  with open(args.write_reference, "w") as f:
    f.write(f"# Tests of tensorflow/estimator {TAG} that pass on the real "
            "Estimator (TF 2.15.1,\n# tensorflow-estimator 2.15.0), "
            "written by tools/conformance.py --reference.\n")
    f.write("\n".join(sorted(passed)) + "\n")
  print(f"{len(passed)} passing tests written to {args.write_reference}")


def run_engines(args, work: str, out_dir: str,
                base_env: Dict[str, str]) -> None:
  """Runs the counted tests on each engine after install(); prints the table."""
  counted = counted_tests(args.files)
  env = dict(base_env, CONFORMANCE_INSTALL="1",
             PYTHONPATH=os.pathsep.join([ROOT, TOOLS]))
  by_engine = {}
  for engine in engines_of(args.engine):
    results = {}
    for name in args.files:
      results.update(run_file(
          args.python, work, name, engine_env(env, engine), counted,
          args.timeout, out_dir, engine))
    by_engine[engine] = results
    with open(os.path.join(out_dir, f"{engine}.json"), "w") as f:
      json.dump(results, f, indent=1, sort_keys=True)
  print_table(counted, by_engine, args.files)
  print(f"Per-test results: {out_dir}/<engine>.json")


def print_saved_table(args) -> None:
  """The table of an earlier run's --out, with the current lists."""
  by_engine = {}
  for engine in engines_of(args.engine):
    path = os.path.join(args.table_from, f"{engine}.json")
    if os.path.exists(path):
      with open(path) as f:
        by_engine[engine] = json.load(f)
  print_table(counted_tests(args.files), by_engine, args.files)


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("checkout", nargs="?",
                      help=f"tensorflow/estimator at {TAG}")
  parser.add_argument("--engine", choices=("all",) + ENGINES, default="all",
                      help="all (the default): the default engine, then "
                      "graph and function forced; or one of them")
  parser.add_argument("--python", default=sys.executable,
                      help="the Python to run the tests with")
  parser.add_argument("--timeout", type=float, default=90.0,
                      help="seconds each test may take")
  parser.add_argument("--files", nargs="*", choices=TEST_FILES,
                      default=list(TEST_FILES))
  parser.add_argument("--out", help="directory for the per-test results "
                      "(default: a new temporary directory)")
  parser.add_argument("--table-from", metavar="OUT",
                      help="only print the table of an earlier run's --out")
  parser.add_argument("--reference", action="store_true",
                      help="run on the real Estimator (see --python)")
  parser.add_argument("--write-reference", default=REFERENCE_FILE)
  args = parser.parse_args(argv)
  if args.table_from:
    print_saved_table(args)
    return 0
  if not args.checkout:
    parser.error("give the path of a tensorflow/estimator checkout at " + TAG)

  test_dir = check_checkout(args.checkout)
  # Absolute: the tests run in another working directory.
  out_dir = os.path.abspath(args.out or tempfile.mkdtemp(prefix="conformance-"))
  os.makedirs(out_dir, exist_ok=True)
  work = tempfile.mkdtemp(prefix="conformance-tests-")
  copy_tests(test_dir, work)
  base_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
                  CUDA_VISIBLE_DEVICES="")
  base_env.pop("TF_CONFIG", None)
  try:
    if args.reference:
      run_reference(args, work, out_dir, base_env)
    else:
      run_engines(args, work, out_dir, base_env)
    return 0
  finally:
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
  sys.exit(main())
