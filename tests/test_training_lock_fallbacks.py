"""The training lock where locking cannot work as usual (model_dir_lock.py).

A filesystem without flock (NFS without lockd): the lock is skipped with a
warning and no file is left behind; a lock file replaced again and again: a
clear error; an unwritable lock file: the lock still holds; remote
model_dirs: not locked. Each case plants the condition with a patched OS
call, so the tests run in milliseconds.
"""

import errno
import os

import pytest

from estimator_compat.front import model_dir_lock


@pytest.fixture
def warnings(warnings_of):
  return warnings_of(model_dir_lock)


def _flock_failing_with(number):
  def flock(fd, operation):
    del fd, operation
    raise OSError(number, os.strerror(number))
  return flock


def test_a_remote_model_dir_is_not_locked():
  assert model_dir_lock.acquire("gs://bucket/model") is None


def test_no_file_locks_warns_and_leaves_no_lock_file(tmp_path, monkeypatch,
                                                     warnings):
  monkeypatch.setattr(model_dir_lock.fcntl, "flock",
                      _flock_failing_with(errno.ENOLCK))
  assert model_dir_lock.acquire(str(tmp_path)) is None
  assert not os.path.exists(tmp_path / model_dir_lock.LOCK_FILE)
  (said,) = warnings
  assert "this filesystem has no file locks" in said
  assert "one trainer at a time" in said


def test_another_lock_error_is_raised_as_it_is(tmp_path, monkeypatch):
  monkeypatch.setattr(model_dir_lock.fcntl, "flock",
                      _flock_failing_with(errno.EIO))
  with pytest.raises(OSError) as raised:
    model_dir_lock.acquire(str(tmp_path))
  assert raised.value.errno == errno.EIO


def test_a_lock_file_replaced_at_every_try_is_an_error(tmp_path, monkeypatch):
  monkeypatch.setattr(model_dir_lock, "_same_file", lambda fd, path: False)
  with pytest.raises(model_dir_lock.ModelDirInUseError) as raised:
    model_dir_lock.acquire(str(tmp_path))
  assert "other processes keep taking it" in str(raised.value)
  assert "Fix: make sure one trainer at a time" in str(raised.value)
  # Nothing is held: a later try succeeds.
  monkeypatch.undo()
  model_dir_lock.release(model_dir_lock.acquire(str(tmp_path)))


def test_a_holder_that_cannot_be_written_still_holds_the_lock(
    tmp_path, monkeypatch, warnings):
  def pwrite(fd, data, offset):
    del fd, data, offset
    raise OSError(errno.ENOSPC, "No space left on device")
  monkeypatch.setattr(model_dir_lock.os, "pwrite", pwrite)
  lock = model_dir_lock.acquire(str(tmp_path))
  try:
    assert lock is not None
    assert "Could not write the holder" in warnings[0]
    with pytest.raises(model_dir_lock.ModelDirInUseError,
                       match="this process"):
      model_dir_lock.acquire(str(tmp_path))
  finally:
    model_dir_lock.release(lock)


def test_release_leaves_a_replaced_lock_file_alone(tmp_path):
  lock = model_dir_lock.acquire(str(tmp_path))
  os.remove(lock.path)
  with open(lock.path, "w") as f:
    f.write("someone else's")
  model_dir_lock.release(lock)
  with open(lock.path) as f:
    assert f.read() == "someone else's"
  model_dir_lock.release(None)


def test_an_unreadable_lock_file_reads_as_empty():
  read, write = os.pipe()
  os.close(write)
  os.close(read)
  assert model_dir_lock._content(read) == ""  # pylint: disable=protected-access


@pytest.mark.parametrize("text, holder", [
    ("", "an unknown process (the lock file names none)"),
    ('{"host": "h"}', "an unknown process (the lock file names none)"),
    ('{"pid": 7, "host": "h", "started": true}', "pid 7 on host 'h'"),
    ('{"pid": 7, "host": "h", "started": 1e300}', "pid 7 on host 'h'"),
])
def test_the_holder_is_described_from_whatever_the_file_says(text, holder):
  assert model_dir_lock._describe(text) == holder  # pylint: disable=protected-access
