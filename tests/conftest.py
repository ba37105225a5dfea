"""Test setup: estimator_compat first, so tf.keras resolves to tf-keras."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import estimator_compat  # noqa: E402,F401  pylint: disable=g-import-not-at-top
import pytest  # noqa: E402  pylint: disable=g-import-not-at-top


@pytest.fixture(autouse=True)
def _no_tf_config(monkeypatch):
  """Tests start without a TF_CONFIG unless they set one."""
  monkeypatch.delenv("TF_CONFIG", raising=False)


@pytest.fixture(params=["graph", "function"])
def engine(request, monkeypatch):
  """Runs a test once per engine (through $ESTIMATOR_COMPAT_ENGINE)."""
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", request.param)
  return request.param


@pytest.fixture(params=["default", "graph", "function"])
def engine_name(request, monkeypatch):
  """Runs a test on the default engine (routing on) and on each engine."""
  if request.param == "default":
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  else:
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", request.param)
  return request.param


@pytest.fixture
def warnings_of(monkeypatch):
  """warnings_of(module): a list of what module's `logging.warning` says.

  The module's logger call is replaced for the test, each message formatted
  with its arguments.
  """
  def capture(module):
    said = []
    monkeypatch.setattr(module.logging, "warning",
                        lambda msg, *args: said.append(msg % args))
    return said
  return capture


@pytest.fixture
def tmpfs(tmp_path):
  """A small tmpfs mounted for the test: (path, remount(options)).

  Needs root (CI runs as root); elsewhere the test is skipped. Writers the
  test left open are closed before each remount and the final unmount.
  """
  # pylint: disable=g-import-not-at-top
  import subprocess
  import tensorflow as tf
  mount = tmp_path / "mnt"
  mount.mkdir()
  if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs",
                     str(mount)], capture_output=True).returncode != 0:
    pytest.skip("cannot mount a tmpfs here (not root?)")

  def remount(options):
    tf.compat.v1.summary.FileWriterCache.clear()  # closes its open files
    subprocess.run(["mount", "-o", f"remount,{options}", str(mount)],
                   check=True)

  try:
    yield mount, remount
  finally:
    tf.compat.v1.summary.FileWriterCache.clear()
    subprocess.run(["umount", "-l", str(mount)], check=False)


# tools/dev.sh test runs pytest, then `bazel test //...`, which runs every
# test file BUILD does not tag slow (its SLOW_TESTS) with `-m 'not slow'`.
# With ESTIMATOR_COMPAT_BAZEL_PART=skip, pytest leaves exactly that part to
# Bazel, so CI runs each test once.
_BAZEL_PART = "ESTIMATOR_COMPAT_BAZEL_PART"


def bazel_slow_files(build_path=None):
  """The test file names BUILD's SLOW_TESTS tags slow (pytest runs them).

  BUILD's SLOW_TESTS block is plain Python (a dict and a comprehension), so
  it is evaluated here rather than kept as a second list.
  """
  build_path = build_path or os.path.join(
      os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "BUILD")
  with open(build_path, encoding="utf-8") as f:
    text = f.read()
  start = text.index("SLOW_TESTS = {")
  end = text.index("\n[py_test(", start)
  scope = {}
  exec(compile(text[start:end], build_path, "exec"), scope)  # pylint: disable=exec-used
  return {name for name, tags in scope["SLOW_TESTS"].items() if "slow" in tags}


def pytest_collection_modifyitems(config, items):
  if os.environ.get(_BAZEL_PART) != "skip":
    return
  slow_files = bazel_slow_files()
  kept, left = [], []
  for item in items:
    name = os.path.splitext(os.path.basename(str(item.fspath)))[0]
    if name in slow_files or item.get_closest_marker("slow") is not None:
      kept.append(item)
    else:
      left.append(item)
  if left:
    config.hook.pytest_deselected(items=left)
    items[:] = kept
