"""The ClusterCoordinator's remote-error records, shortened
(engines/function/coordinator_log.py)."""

import logging

import tensorflow as tf

from estimator_compat.engines.function import coordinator_log


def _record(msg, *args):
  return logging.LogRecord("tensorflow", logging.WARNING, __file__, 1, msg,
                           args, None)


def test_a_long_remote_error_keeps_its_first_and_last_lines():
  record = _record("Remote function on worker %s failed with\n%s\n%s\n%s",
                   "/job:worker/task:0", "grpc details", "node names",
                   "treated as a transient connectivity failure")
  assert coordinator_log.ShortRemoteErrors().filter(record)
  assert record.getMessage() == (
      "Remote function on worker /job:worker/task:0 failed with [...] "
      "treated as a transient connectivity failure")


def test_a_workers_closure_error_keeps_its_first_and_last_lines():
  # (A CI run's lost-ps test printed 101 lines: these records, whole.)
  record = _record(
      " /job:worker/task:%d encountered the following error when processing "
      "closure: %r:%s", 1, "UnavailableError()",
      "Graph execution error:\n\n2 root error(s) found.\n  (0) UNAVAILABLE: "
      "failed to connect\n  (1) CANCELLED\n0 derived errors ignored.")
  assert coordinator_log.ShortRemoteErrors().filter(record)
  assert record.getMessage() == (
      " /job:worker/task:1 encountered the following error when processing "
      "closure: 'UnavailableError()':Graph execution error: [...] "
      "0 derived errors ignored.")


def test_short_and_other_records_are_left_alone():
  short = _record("Remote function on worker 0 failed\nignored")
  other = _record("something else\n1\n2\n3")
  not_text = _record(ValueError("Remote function on worker"))
  for record in (short, other, not_text):
    before = record.getMessage()
    assert coordinator_log.ShortRemoteErrors().filter(record)
    assert record.getMessage() == before


def test_the_filter_is_installed_once():
  logger = tf.get_logger()
  before = list(logger.filters)
  for f in before:
    if isinstance(f, coordinator_log.ShortRemoteErrors):
      logger.removeFilter(f)
  try:
    coordinator_log.shorten_remote_errors()
    coordinator_log.shorten_remote_errors()
    installed = [f for f in logger.filters
                 if isinstance(f, coordinator_log.ShortRemoteErrors)]
    assert len(installed) == 1
  finally:
    for f in list(logger.filters):
      logger.removeFilter(f)
    for f in before:
      logger.addFilter(f)
