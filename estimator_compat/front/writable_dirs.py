"""Fails early when a directory that a call must write to is not writable.

TensorFlow's event writers write from a background thread: on a read-only
directory the summaries are lost with, at most, a log line. A call that
writes summaries probes its directory first and refuses with the fix.
"""

import os
import tempfile

import tensorflow as tf


def check_writable(directory: str, what: str, fix: str) -> None:
  """Writes (then removes) a probe file where `directory` would be made.

  The probe goes into `directory`, or into its nearest existing parent when
  it does not exist yet: nothing is created, so a call that then fails on
  bad input leaves the disk as it was.

  Args:
    directory: the directory the call writes to.
    what: what the call writes there, for the message.
    fix: the sentence that tells the user what to do.

  Raises:
    PermissionError: the directory cannot be created or written.
  """
  if "://" in directory:
    return  # Object stores: no cheap probe; their writers raise themselves.
  existing = os.path.abspath(directory)
  while not os.path.isdir(existing) and os.path.dirname(existing) != existing:
    existing = os.path.dirname(existing)
  try:
    with tempfile.NamedTemporaryFile(dir=existing, prefix=".write_probe"):
      pass
  except (OSError, tf.errors.OpError) as e:
    reason = getattr(e, "message", None) or getattr(e, "strerror", None) or e
    raise PermissionError(
        f"{what} go to {directory}, which cannot be written ({reason}). "
        f"Fix: {fix}") from e
