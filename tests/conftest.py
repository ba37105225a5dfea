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
