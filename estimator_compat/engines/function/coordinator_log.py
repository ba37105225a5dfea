"""Shorter ClusterCoordinator error lines while a ps or worker is lost.

When a task of a parameter-server cluster goes away, the coordinator logs
every failed closure with the whole remote error (gRPC details, node names,
stack excerpts), twice (the remote function's failure, then the worker's
closure error): a hundred lines or more before our own error, which says
what happened and the fix. This filter keeps the first line of each such
record and the coordinator's verdict ("treated as a transient connectivity
failure", "ignored"); the full error stays available at DEBUG level.
"""

import logging

import tensorflow as tf

_PREFIX = "Remote function on worker"
# A worker's record of a closure that failed (the whole remote error again).
_CLOSURE_ERROR = "encountered the following error when processing closure"


class ShortRemoteErrors(logging.Filter):
  """Cuts the coordinator's 'Remote function on worker ... failed' and
  '... encountered the following error when processing closure' records."""

  def filter(self, record: logging.LogRecord) -> bool:
    if not (isinstance(record.msg, str) and (
        record.msg.startswith(_PREFIX) or _CLOSURE_ERROR in record.msg)):
      return True
    lines = record.getMessage().splitlines()
    if len(lines) > 2:
      tf.get_logger().debug("%s", "\n".join(lines))
      record.msg = f"{lines[0]} [...] {lines[-1]}"
      record.args = ()
    return True


def shorten_remote_errors() -> None:
  """Installs the filter on TensorFlow's logger (once per process)."""
  logger = tf.get_logger()
  if not any(isinstance(f, ShortRemoteErrors) for f in logger.filters):
    logger.addFilter(ShortRemoteErrors())
