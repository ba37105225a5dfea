"""Lets a finished call's input iterator go on a background thread.

Destroying a tf.data iterator cancels its pipeline's threads and waits for
them to stop. On the benchmark's pipeline (`repeat().batch().prefetch()`)
that wait is 0.1-0.2 s of wall time with no CPU in about half of the calls,
and up to seconds at times (docs/speed.md): longer than a whole 500-batch
evaluation's steps. Nothing a call returns depends on it, so the call hands
the iterator to one daemon thread that drops it there; the call returns
without the wait. What runs is unchanged: the same iterator is destroyed
the same way, a little later, on another thread.

`wait()` blocks until every iterator handed over is gone: tests that count a
call's threads use it, and it runs at interpreter exit, so that no pipeline
is torn down while Python shuts down.
"""

import atexit
import queue
import threading
from typing import Any, List, Optional

_queue: "queue.SimpleQueue[List[Any]]" = queue.SimpleQueue()
_lock = threading.Condition()
_pending = 0
_thread: Optional[threading.Thread] = None


def let_go(holder: List[Any]) -> None:
  """Empties `holder` on the release thread.

  The caller passes the only reference to what it lets go inside a list and
  keeps no other, so that clearing the list there is what destroys it.

  Args:
    holder: a list holding the objects to drop (an input iterator).
  """
  global _pending, _thread
  with _lock:
    _pending += 1
    if _thread is None:
      _thread = threading.Thread(target=_run, name="estimator_compat-release",
                                 daemon=True)
      _thread.start()
  _queue.put(holder)


def wait(timeout: Optional[float] = None) -> bool:
  """Blocks until every iterator handed over is gone; False on timeout."""
  with _lock:
    return _lock.wait_for(lambda: _pending == 0, timeout=timeout)


def _run() -> None:
  global _pending
  while True:
    holder = _queue.get()
    try:
      holder.clear()
    except Exception:  # pylint: disable=broad-except
      pass  # A pipeline that fails to stop has nothing left to report to.
    del holder
    with _lock:
      _pending -= 1
      _lock.notify_all()


# A teardown still running when Python finalizes could touch freed state.
atexit.register(wait, 60.0)
