"""CI runs each test once: pytest the slow part, Bazel the rest (BUILD)."""

import os
import subprocess
import sys

from tests import conftest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _collected(*files, **env):
  environ = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **env)
  environ.pop("ESTIMATOR_COMPAT_BAZEL_PART", None)
  environ.update(env)
  done = subprocess.run(
      [sys.executable, "-m", "pytest", "--collect-only", "-q",
       "-p", "no:cacheprovider", *files], cwd=ROOT, env=environ,
      capture_output=True, text=True, timeout=300, check=False)
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  return {line.split("::")[1].split("[")[0]
          for line in done.stdout.splitlines() if "::" in line}


def test_build_slow_tests_are_read_from_build():
  slow = conftest.bazel_slow_files()
  assert {"test_cluster", "test_goldens", "test_ci_split"} <= slow
  assert "test_spec" not in slow and "test_strategies" not in slow


def test_pytest_part_keeps_slow_files_and_slow_functions_only():
  files = ["tests/test_strategies.py", "tests/test_ps_fetch.py"]
  everything = _collected(*files)
  pytest_part = _collected(*files, ESTIMATOR_COMPAT_BAZEL_PART="skip")
  # test_strategies is a Bazel file: only its slow-marked function stays.
  assert "test_no_cluster_no_flag_is_default" in everything
  assert pytest_part == {"test_tf1_mode_strategy_objects_run_as_the_estimator"}
  assert _collected("tests/test_ci_split.py",
                    ESTIMATOR_COMPAT_BAZEL_PART="skip") == {
                        "test_build_slow_tests_are_read_from_build",
                        "test_pytest_part_keeps_slow_files_and_slow_functions_only"}
