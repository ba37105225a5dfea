"""The PS loop's reading of a finished closure's loss (no cluster started).

A closure's result stays on its worker until fetched; these cases pin what
the loop does when that fetch fails, which on a real cluster happens only in
the short window between a closure finishing and its worker being killed.
"""

import pytest
import tensorflow as tf
from tensorflow.python.distribute.coordinator import remote_value  # pylint: disable=g-direct-tensorflow-import

from estimator_compat.engines.function import ps_training


class _Remote:
  """Stands in for a RemoteValue: a status, an error, a fetch."""

  def __init__(self, status, error=None, value=None, fetch_error=None):
    self._status = status
    self._error = error
    self._value = value
    self._fetch_error = fetch_error

  def fetch(self):
    if self._fetch_error is not None:
      raise self._fetch_error
    return self._value


class _Step:

  def __init__(self, ps_alive=True):
    self._alive = ps_alive

  def numpy(self):
    if not self._alive:
      raise tf.errors.UnavailableError(None, None, "ps:0 is gone")
    return 7


_WORKER_GONE = tf.errors.UnavailableError(None, None, "worker:1 is gone")
_READY = remote_value.RemoteValueStatus.READY


def test_a_finished_closure_returns_its_loss():
  assert ps_training._fetch_loss(_Remote(_READY, value=0.25), _Step()) == 0.25


def test_a_worker_lost_after_finishing_gives_an_unknown_loss():
  remote = _Remote(_READY, fetch_error=_WORKER_GONE)
  assert ps_training._fetch_loss(remote, _Step()) is None


def test_a_lost_ps_is_raised_even_when_the_closure_finished():
  remote = _Remote(_READY, fetch_error=_WORKER_GONE)
  with pytest.raises(tf.errors.UnavailableError, match="ps:0"):
    ps_training._fetch_loss(remote, _Step(ps_alive=False))


def test_a_closure_that_failed_is_raised():
  error = tf.errors.UnavailableError(None, None, "closure failed")
  remote = _Remote(_READY, error=error, fetch_error=error)
  with pytest.raises(tf.errors.UnavailableError, match="closure failed"):
    ps_training._fetch_loss(remote, _Step())


def test_coordinator_error_records_are_cut_to_their_first_and_last_line():
  # pylint: disable=g-import-not-at-top
  import logging
  from estimator_compat.engines.function import coordinator_log
  record = logging.LogRecord(
      "tensorflow", logging.ERROR, "cluster_coordinator.py", 1,
      "Remote function on worker %s failed with %r:%s\n"
      "It is treated as a transient connectivity failure for now.",
      ("/job:worker/task:1", "UnavailableError()",
       "Graph execution error:\n\nDetected at node x\n" + "noise\n" * 50),
      None)
  assert coordinator_log.ShortRemoteErrors().filter(record)
  message = record.getMessage()
  assert message.startswith(
      "Remote function on worker /job:worker/task:1 failed with")
  assert message.endswith("treated as a transient connectivity failure for "
                          "now.")
  assert "noise" not in message and len(message.splitlines()) == 1
