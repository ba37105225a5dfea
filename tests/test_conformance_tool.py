"""tools/conformance.py: per-test outcomes, hang recovery and the lists."""

import importlib.util
import json
import os
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools")


def _load_conformance():
  spec = importlib.util.spec_from_file_location(
      "conformance", os.path.join(TOOLS, "conformance.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


conformance = _load_conformance()

_FAKE_TESTS = """
    import time

    def test_passes():
      pass

    def test_fails():
      raise ValueError("the message")

    def test_hangs():
      time.sleep(120)

    def test_after_the_hang():
      pass

    def test_not_counted():
      pass
"""


def test_run_file_records_each_outcome_and_resumes_after_a_hang(tmp_path):
  work, out = tmp_path / "work", tmp_path / "out"
  work.mkdir()
  out.mkdir()
  (work / "fake_test.py").write_text(textwrap.dedent(_FAKE_TESTS))
  only = {f"fake_test.py::{name}" for name in (
      "test_passes", "test_fails", "test_hangs", "test_after_the_hang",
      "test_missing")}
  env = dict(os.environ, PYTHONPATH=TOOLS)
  env.pop("CONFORMANCE_INSTALL", None)

  results = conformance.run_file(sys.executable, str(work), "fake_test.py",
                                 env, only, 8.0, str(out), "engine")

  outcomes = {t.split("::")[1]: r["outcome"] for t, r in results.items()}
  assert outcomes == {"test_passes": "passed", "test_fails": "failed",
                      "test_hangs": "timeout",
                      "test_after_the_hang": "passed",
                      "test_missing": "not run"}
  assert results["fake_test.py::test_fails"]["error"].startswith(
      "ValueError: the message [at fake_test.py:")
  hang = (out / "engine-fake_test.py.jsonl.hang").read_text()
  assert "in test_hangs" in hang  # Where it hung, for the triage.


def test_tf1_files_run_under_tf1_behaviour(tmp_path, monkeypatch):
  # numpy_io_test and pandas_io_test are run_v1_only: they count only under
  # TF1 behaviour, which the harness sets before the file is imported.
  assert set(conformance.TF1_FILES) <= set(conformance.TEST_FILES)
  work, out = tmp_path / "work", tmp_path / "out"
  work.mkdir()
  out.mkdir()
  (work / "fake_v1_test.py").write_text(textwrap.dedent("""
      import tensorflow as tf

      def test_tf1_behaviour():
        assert not tf.executing_eagerly()
  """))
  monkeypatch.setattr(conformance, "TF1_FILES", ("fake_v1_test.py",))
  env = dict(os.environ, PYTHONPATH=TOOLS)
  env.pop("CONFORMANCE_INSTALL", None)

  results = conformance.run_file(sys.executable, str(work), "fake_v1_test.py",
                                 env, None, 120.0, str(out), "engine")

  outcome = results["fake_v1_test.py::test_tf1_behaviour"]
  assert outcome["outcome"] == "passed", outcome["error"]


def test_committed_lists_are_consistent():
  reference = conformance.read_id_file(conformance.REFERENCE_FILE)
  exclusions = conformance.read_id_file(conformance.EXCLUSIONS_FILE)
  files = [t.split("::")[0] for t in reference]
  # Issue 24's families: the RNN estimators, LinearSDCA, KMeans.
  issue24_files = [f for f in conformance.TEST_FILES if f.startswith(
      ("canned/rnn", "canned/linear_optimizer", "canned/kmeans"))]
  linear_files = [f for f in conformance.TEST_FILES
                  if f.startswith(("canned/linear", "canned/baseline"))
                  and f not in issue24_files]
  dnn_files = [f for f in conformance.TEST_FILES
               if f.startswith("canned/dnn")]
  assert len([f for f in files if f.startswith("head/")]) == 221
  assert len([f for f in files if f in linear_files]) == 182
  assert len([f for f in files if f in dnn_files]) == 242
  # rnn_test 31, the SDCA files 17 + 29 + 3, kmeans_test 37 on TF 2.15.
  assert len([f for f in files if f in issue24_files]) == 117
  assert len([f for f in files
              if not f.startswith(("head/", "canned/"))]) == 699
  # Issue 24's small public-API files: exporter 11, extenders 6, numpy_io 24
  # and pandas_io 16 (TF1 behaviour), parsing_utils 36, the session-run
  # hooks 73, keras_premade_model 3, object_checkpointing 2.
  small_files = [f for f in conformance.TEST_FILES if f in (
      "exporter_test.py", "extenders_test.py", "inputs/numpy_io_test.py",
      "inputs/pandas_io_test.py", "canned/parsing_utils_test.py",
      "hooks/basic_session_run_hooks_test.py", "keras_premade_model_test.py",
      "object_checkpointing_test.py")]
  assert len(small_files) == 8
  assert len([f for f in files if f in small_files]) == 171
  assert len(conformance.counted_tests(small_files)) == 164
  # Issue 24's distribution files (keras_distribute_strategy 5, the
  # integration test 5, the training test 6) and the TPU files that pass
  # without a TPU (63 on TF 2.15, tpu_config_test aside).
  dist_files = [f for f in conformance.TEST_FILES if "distribute" in f]
  tpu_files = [f for f in conformance.TEST_FILES if f.startswith("tpu/")
               and f != "tpu/tpu_config_test.py"]
  assert (len(dist_files), len(tpu_files)) == (3, 6)
  assert len([f for f in files if f in dist_files]) == 16
  assert len(conformance.counted_tests(dist_files)) == 11
  assert len([f for f in files if f in tpu_files]) == 63
  assert len(conformance.counted_tests(tpu_files)) == 26
  # The canned/v1 files under TF1 behaviour: 666 pass on TF 2.15, 451
  # counted (those building the private canned.head and the like excluded).
  v1_files = list(conformance.CANNED_V1_FILES)
  assert len([f for f in files if f in v1_files]) == 666
  assert len(conformance.counted_tests(v1_files)) == 451
  assert set(exclusions) <= set(reference)
  assert all(reason for reason in exclusions.values())
  assert {t.split("::")[0] for t in reference} == set(conformance.TEST_FILES)
  head_files = [f for f in conformance.TEST_FILES if f.startswith("head/")]
  core_files = [f for f in conformance.TEST_FILES
                if not f.startswith(("head/", "canned/"))]
  assert len(conformance.counted_tests(core_files)) == 517
  assert len(conformance.counted_tests(head_files)) == 112
  assert len(conformance.counted_tests(linear_files)) == 142
  assert len(conformance.counted_tests(dnn_files)) == 184
  assert len(conformance.counted_tests(issue24_files)) == 100


def test_testcase_helpers_are_counted_in_no_file():
  counted = conformance.counted_tests(list(conformance.TEST_FILES))
  reference = conformance.read_id_file(conformance.REFERENCE_FILE)
  helpers = [t for t in reference if t.endswith("::test_session")]
  assert len(helpers) == 191  # The rule has something to leave out.
  assert [t for t in counted if t.endswith("::test_session")] == []
  # Only the method itself: test_session_master_* are tests of the file.
  assert ("run_config_test.py::RunConfigDistributedSettingTest::"
          "test_session_master_for_local") in counted


def test_the_default_engine_runs_with_no_engine_set_and_comes_first():
  env = {"ESTIMATOR_COMPAT_ENGINE": "graph", "OTHER": "1"}
  assert conformance.engines_of("all") == ["default", "graph", "function"]
  assert conformance.engine_env(env, "default") == {"OTHER": "1"}
  assert conformance.engine_env(env, "function") == {
      "ESTIMATOR_COMPAT_ENGINE": "function", "OTHER": "1"}


def test_the_table_has_a_default_engine_column_first(tmp_path, capsys):
  test_id = "model_fn_test.py::EstimatorSpecTrainTest::testRequiredArgumentsSet"
  assert test_id in conformance.counted_tests(["model_fn_test.py"])
  for engine, outcome in (("default", "passed"), ("graph", "failed"),
                          ("function", "failed")):
    (tmp_path / f"{engine}.json").write_text(
        json.dumps({test_id: {"outcome": outcome}}))

  conformance.main(["--table-from", str(tmp_path), "--files",
                    "model_fn_test.py"])

  lines = capsys.readouterr().out.splitlines()
  assert lines[0].split()[2:] == ["default", "pass", "graph", "pass",
                                  "function", "pass"]
  total = lines[-1].split()  # total, counted, then "N (P%)" per column.
  assert (total[0], total[2], total[5], total[8]) == ("total", "1", "0", "0")


def test_a_relative_out_directory_receives_the_results(tmp_path, monkeypatch):
  checkout = tmp_path / "estimator"
  test_dir = checkout / conformance.TEST_DIR
  for name in conformance.TEST_FILES + conformance.SUPPORT_FILES:
    (test_dir / name).parent.mkdir(parents=True, exist_ok=True)
    (test_dir / name).write_text("")
  (test_dir / "model_fn_test.py").write_text(textwrap.dedent("""
      import unittest

      class AFakeTest(unittest.TestCase):

        def test_passes(self):
          pass
  """))
  monkeypatch.chdir(tmp_path)

  conformance.main([str(checkout), "--reference", "--files",
                    "model_fn_test.py", "--out", "results",
                    "--write-reference", "passing.txt"])

  assert "model_fn_test.py::AFakeTest::test_passes" in conformance.read_id_file(
      "passing.txt")
  assert (tmp_path / "results" / "reference-model_fn_test.py.jsonl").exists()


def test_a_directory_that_is_not_a_checkout_is_refused_with_the_fix(tmp_path):
  with pytest.raises(SystemExit) as raised:
    conformance.check_checkout(str(tmp_path))
  assert "is not a tensorflow/estimator checkout" in str(raised.value)
  assert "git -C estimator checkout v2.15.0" in str(raised.value)


_TF1_AND_FLAGS_TEST = """
    from absl import flags
    import tensorflow as tf

    flags.DEFINE_string("conformance_fake_flag", "default", "")

    def test_reads_an_absl_flag_and_runs_in_tf1_mode():
      # tf.distribute's combinations read absl flags under pytest.
      assert flags.FLAGS.conformance_fake_flag == "default"
      # canned/v1 files run under TF1 behaviour (their classes skip in TF2).
      assert not tf.compat.v1.executing_eagerly()
"""


def test_canned_v1_files_run_in_tf1_mode_with_absl_flags_parsed(tmp_path):
  work, out = tmp_path / "work", tmp_path / "out"
  (work / "canned" / "v1").mkdir(parents=True)
  out.mkdir()
  name = conformance.CANNED_V1_FILES[0]  # Run under TF1 behaviour.
  (work / name).write_text(textwrap.dedent(_TF1_AND_FLAGS_TEST))
  env = dict(os.environ, PYTHONPATH=TOOLS, TF_CPP_MIN_LOG_LEVEL="3",
             CUDA_VISIBLE_DEVICES="")
  env.pop("CONFORMANCE_INSTALL", None)

  results = conformance.run_file(sys.executable, str(work), name, env, None,
                                 120.0, str(out), "reference")

  test_id = f"{name}::test_reads_an_absl_flag_and_runs_in_tf1_mode"
  assert results[test_id]["outcome"] == "passed", results[test_id]["error"]


_COLLECTION_ERROR_TESTS = """
    import unittest

    class ReadsAMissingNameInInit(unittest.TestCase):

      def __init__(self, methodName="runTest"):
        unittest.TestCase.__init__(self, methodName)
        raise AttributeError("a private name")

      def test_never_runs(self):
        pass

    class Fine(unittest.TestCase):

      def test_passes(self):
        pass
"""


def test_a_class_that_fails_to_collect_leaves_the_others_running(tmp_path):
  work, out = tmp_path / "work", tmp_path / "out"
  work.mkdir()
  out.mkdir()
  (work / "fake_test.py").write_text(textwrap.dedent(_COLLECTION_ERROR_TESTS))
  env = dict(os.environ, PYTHONPATH=TOOLS)
  env.pop("CONFORMANCE_INSTALL", None)
  only = {"fake_test.py::Fine::test_passes",
          "fake_test.py::ReadsAMissingNameInInit::test_never_runs"}

  results = conformance.run_file(sys.executable, str(work), "fake_test.py",
                                 env, only, 60.0, str(out), "engine")

  assert results["fake_test.py::Fine::test_passes"]["outcome"] == "passed"
  assert results["fake_test.py::ReadsAMissingNameInInit::test_never_runs"][
      "outcome"] == "not run"
