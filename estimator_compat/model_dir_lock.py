"""One trainer per model_dir: a lock file the chief's train() holds.

Two trainers on one model_dir interleave their checkpoints, and an
evaluation may read the other run's weights, with nothing said. While a
chief trains, `<model_dir>/.training.lock` holds its pid, host and start
time; a second trainer fails at once with an error naming the holder. A
lock left by a process that is gone (a kill -9) is taken over with a
warning when that process ran on this host; on another host we cannot tell,
so the error says how to remove it by hand.

Only local directories are locked: object stores (`gs://`, `s3://`, ...)
have no atomic create-if-absent through tf.io.gfile.
"""

import contextlib
import json
import os
import socket
import time
from typing import Iterator, Optional

from estimator_compat import tf_logging as logging
from estimator_compat.distribute.cluster_tasks import process_alive

LOCK_FILE = ".training.lock"


class ModelDirInUseError(RuntimeError):
  """Another trainer holds the model_dir."""


def _read(path: str) -> Optional[dict]:
  try:
    with open(path, encoding="utf-8") as f:
      return json.load(f)
  except FileNotFoundError:
    return None
  except (OSError, ValueError):
    return {}  # Unreadable: held by someone we cannot name.


def _describe(holder: dict) -> str:
  if not holder:
    return "an unknown process (the lock file is unreadable)"
  started = time.strftime("%Y-%m-%d %H:%M:%S",
                          time.localtime(holder.get("started", 0)))
  return (f"pid {holder.get('pid')} on host {holder.get('host')!r} "
          f"(since {started})")


def _stale(holder: Optional[dict]) -> bool:
  """Whether a lock's holder is a process of this host that is gone."""
  if not holder or holder.get("host") != socket.gethostname():
    return False
  pid = holder.get("pid")
  return isinstance(pid, int) and pid != os.getpid() and not process_alive(
      pid)


def _try_create(path: str) -> bool:
  try:
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
  except FileExistsError:
    return False
  with os.fdopen(fd, "w", encoding="utf-8") as f:
    json.dump({"pid": os.getpid(), "host": socket.gethostname(),
               "started": time.time()}, f)
  return True


def acquire(model_dir: str) -> Optional[str]:
  """Takes the model_dir's lock; returns its path (None: not lockable).

  Raises:
    ModelDirInUseError: a live process (or one on another host) holds it.
  """
  if "://" in model_dir:
    return None
  os.makedirs(model_dir, exist_ok=True)
  path = os.path.join(model_dir, LOCK_FILE)
  for _ in range(3):  # A stale lock removed by us may be raced for.
    if _try_create(path):
      return path
    holder = _read(path)
    if holder is None:
      continue  # Released between our two looks.
    if not _stale(holder):
      raise ModelDirInUseError(
          f"model_dir {model_dir!r} is being trained by {_describe(holder)}; "
          "two trainers on one model_dir would interleave their checkpoints. "
          "Fix: wait for that run to finish, or train into another model_dir;"
          f" if that process is gone, delete {path}.")
    logging.warning(
        "Taking over the training lock of %s: its holder, %s, is gone "
        "(killed?). Training resumes from the last checkpoint.",
        model_dir, _describe(holder))
    with contextlib.suppress(FileNotFoundError):
      os.remove(path)
  raise ModelDirInUseError(
      f"Could not take the training lock {path}: other processes keep "
      "taking it. Fix: make sure one trainer at a time uses this model_dir.")


def release(path: Optional[str]) -> None:
  """Removes our lock file (if it is still ours)."""
  if path is None:
    return
  holder = _read(path)
  if holder and holder.get("pid") == os.getpid() and holder.get(
      "host") == socket.gethostname():
    with contextlib.suppress(FileNotFoundError):
      os.remove(path)


@contextlib.contextmanager
def held(model_dir: str, is_chief: bool) -> Iterator[None]:
  """Holds the model_dir's lock around a chief's training (else no-op)."""
  path = acquire(model_dir) if is_chief else None
  try:
    yield
  finally:
    release(path)
