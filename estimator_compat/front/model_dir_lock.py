"""One trainer per model_dir: a lock file the chief's train() holds.

Two trainers on one model_dir interleave their checkpoints, and an
evaluation may read the other run's weights, with nothing said. While a
chief trains it holds an OS file lock (`flock`) on
`<model_dir>/.training.lock`; a second trainer fails at once with an error
naming the holder.

The operating system releases a `flock` when its holder dies, however it
dies (kill -9, OOM, a preempted container), so liveness is whether the lock
can be taken, never a pid: a trainer restarted as pid 1 in a new container
(the same pid and host as the dead holder) takes the lock over. The file's
JSON (pid, host, start time) only names the holder in messages; whatever it
holds (nothing, garbage, another format) is read as "unknown", never trusted.
The file is not inherited by programs the trainer starts (close-on-exec); a
child forked without exec keeps the lock until it ends too.

A `flock` is per open file, so two trainers in one process also exclude each
other. Where the filesystem has no `flock` (some FUSE and network mounts),
training goes on without a lock, with a warning, as the Estimator (which had
none) did. Object stores (`gs://`, `s3://`, ...) are not locked either.
"""

import contextlib
import errno
import fcntl
import json
import os
import socket
import threading
import time
from typing import Iterator, Optional, Tuple

import tensorflow as tf

from estimator_compat.checkpoints import checkpoint_files
from estimator_compat.front import tf_logging as logging

LOCK_FILE = ".training.lock"
# errnos of a filesystem that cannot lock (no flock support).
_NO_LOCKING = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)
# errnos of a model_dir that cannot be written.
_NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)
# Lock files this process holds, by real path (a second trainer in this
# process is refused even where flock is emulated per process, as on NFS).
_held_here = set()
_held_here_lock = threading.Lock()


class ModelDirInUseError(RuntimeError):
  """Another trainer holds the model_dir."""


def _content(fd: int) -> str:
  """The lock file's text, as far as it can be read ('' when not)."""
  try:
    return os.pread(fd, 4096, 0).decode("utf-8", errors="replace")
  except OSError:
    return ""


def _describe(text: str) -> str:
  """The holder named by a lock file's text, whatever that text is."""
  try:
    holder = json.loads(text)
  except ValueError:
    holder = None
  if not isinstance(holder, dict) or "pid" not in holder:
    return "an unknown process (the lock file names none)"
  started = holder.get("started")
  since = ""
  if isinstance(started, (int, float)) and not isinstance(started, bool):
    with contextlib.suppress(OverflowError, OSError, ValueError):
      since = " (since %s)" % time.strftime("%Y-%m-%d %H:%M:%S",
                                            time.localtime(started))
  return f"pid {holder.get('pid')!r} on host {holder.get('host')!r}{since}"


def _not_writable(model_dir: str, error: OSError) -> Exception:
  """The Estimator's error for an unwritable model_dir, with the fix."""
  return tf.errors.PermissionDeniedError(
      None, None,
      f"{model_dir}; {error.strerror or error}. train() writes checkpoints "
      f"into its model_dir, and {model_dir} cannot be written. Nothing was "
      "changed on disk. Fix: train into a writable model_dir (to continue "
      "this model, copy its files there), or make this one writable; "
      "evaluate, predict and export only read it.")


def _open(model_dir: str, path: str) -> Tuple[int, bool]:
  """Opens the lock file, never through a symlink; (fd, whether created)."""
  flags = os.O_RDWR | os.O_NOFOLLOW
  try:
    os.makedirs(model_dir, exist_ok=True)
    try:
      return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
    except FileExistsError:
      return os.open(path, flags), False
  except FileNotFoundError:
    return _open(model_dir, path)  # Removed between our two opens.
  except OSError as e:
    if e.errno in _NOT_WRITABLE:
      raise _not_writable(model_dir, e) from e
    if e.errno == errno.ELOOP:
      raise ValueError(
          f"{path} is a symbolic link; the training lock is only ever a "
          f"plain file of the model_dir. Nothing was changed on disk. Fix: "
          f"remove {path}.") from e
    raise


class _Lock:
  """A held lock: its path and open file; released by release()."""

  def __init__(self, path: str, fd: int, key: str):
    self.path = path
    self.fd = fd
    self.key = key


def _same_file(fd: int, path: str) -> bool:
  """Whether `path` still is the file open as `fd` (not removed/replaced)."""
  try:
    here, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
  except OSError:
    return False
  return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _in_use(model_dir: str, path: str, holder: str) -> ModelDirInUseError:
  return ModelDirInUseError(
      f"model_dir {model_dir!r} is being trained by {holder}; two trainers "
      "on one model_dir would interleave their checkpoints. Nothing was "
      "changed on disk. Fix: wait for that run to finish, or train into "
      f"another model_dir. (The lock is an OS file lock on {path}: it ends "
      "with its process, so deleting the file does not stop that run.)")


def acquire(model_dir: str) -> Optional[_Lock]:
  """Takes the model_dir's lock; returns it (None: not lockable here).

  Nothing in model_dir is changed unless the lock is taken (its file is
  created when there is none).

  Raises:
    ModelDirInUseError: a live trainer holds it.
    tf.errors.PermissionDeniedError: model_dir cannot be written.
    ValueError: model_dir is a file.
  """
  if "://" in model_dir:
    return None
  checkpoint_files.check_model_dir(model_dir)
  path = os.path.join(model_dir, LOCK_FILE)
  key = os.path.realpath(path)
  with _held_here_lock:
    if key in _held_here:
      raise _in_use(model_dir, path, f"this process (pid {os.getpid()})")
  for _ in range(3):  # The holder may remove the file as we open it.
    fd, created = _open(model_dir, path)
    try:
      fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
      text = _content(fd)
      os.close(fd)
      if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
        raise _in_use(model_dir, path, _describe(text)) from e
      if e.errno in _NO_LOCKING:
        if created:
          with contextlib.suppress(OSError):
            os.remove(path)
        logging.warning(
            "Cannot lock %s (%s): this filesystem has no file locks, so "
            "nothing stops a second trainer on this model_dir. Make sure "
            "one trainer at a time uses it.", path, e.strerror)
        return None
      raise
    if not _same_file(fd, path):
      os.close(fd)  # Released and removed meanwhile: lock the new file.
      continue
    _take_over(model_dir, fd, created)
    with _held_here_lock:
      _held_here.add(key)
    return _Lock(path, fd, key)
  raise ModelDirInUseError(
      f"Could not take the training lock {path}: other processes keep "
      "taking it. Fix: make sure one trainer at a time uses this model_dir.")


def _take_over(model_dir: str, fd: int, created: bool) -> None:
  """Writes our name into the lock; warns when a dead holder left it."""
  if not created:  # A lock file that nobody holds: its holder died.
    logging.warning(
        "Taking over the training lock of %s: its holder, %s, is gone "
        "(killed?). Training resumes from the last checkpoint.", model_dir,
        _describe(_content(fd)))
  ours = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                     "started": time.time()}).encode("utf-8")
  try:
    os.ftruncate(fd, 0)
    os.pwrite(fd, ours, 0)
  except OSError as e:  # The lock holds; only the name in it is missing.
    logging.warning("Could not write the holder into the training lock of "
                    "%s: %s", model_dir, e)


def release(lock: Optional[_Lock]) -> None:
  """Removes the lock file, then lets the lock go."""
  if lock is None:
    return
  try:
    if _same_file(lock.fd, lock.path):
      with contextlib.suppress(OSError):
        os.remove(lock.path)
  finally:
    with _held_here_lock:
      _held_here.discard(lock.key)
    os.close(lock.fd)  # Closing the file ends the flock.


@contextlib.contextmanager
def held(model_dir: str, is_chief: bool) -> Iterator[None]:
  """Holds the model_dir's lock around a chief's training (else no-op)."""
  lock = acquire(model_dir) if is_chief else None
  try:
    yield
  finally:
    release(lock)
