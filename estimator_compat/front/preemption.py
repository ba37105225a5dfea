"""Preemption-safe training: SIGTERM and SIGINT end train() with a checkpoint.

A preempted machine (Kubernetes, a spot VM, a batch scheduler) gets SIGTERM
some seconds before it is killed; Ctrl-C sends SIGINT. The Estimator died on
either and lost every step since its last save (600 s by default). While a
chief's (or a trainer's) train() runs, `watch()` catches both signals:
training finishes the step (or the call of steps) in progress, stops as if a
hook had asked, and saves a checkpoint at the step reached through the usual
path (CheckpointSaverHook on the graph engine, the checkpoint writer on the
function engine), so saving listeners see `before_save`/`after_save`/`end`;
train() releases the model_dir lock, and only then does the signal act:

- a handler the program had installed for it is called (chained);
- SIGINT with Python's default handler raises KeyboardInterrupt, as always;
- SIGTERM with the default action exits with SystemExit(128 + 15 = 143),
  the code a shell reports for a process ended by SIGTERM (finally blocks
  and atexit handlers still run).

A second signal while training stops (or saves) acts at once, as without
this module. The handlers are installed only from the main thread (Python
delivers signals there only), only while train() runs, and the previous ones
are restored after; a signal the program ignores (SIG_IGN) or handles in C
is left alone. RunConfig(save_on_preemption=False) (or the binary's
--nosave_on_preemption) turns it off. Not under multi-worker synchronous
training (MultiWorkerMirroredStrategy on a cluster): one worker stopping
alone would leave the others waiting in a collective; there a signal kills
as before (docs/failure_semantics.md).
"""

import contextlib
import gc
import os
import signal
import threading
from typing import Any, Dict, Iterator, Optional

from estimator_compat.front import tf_logging as logging
from estimator_compat.distribute import strategies
from estimator_compat.front.configuration import Choices

SIGNALS = (signal.SIGTERM, signal.SIGINT)
# The signal received while a watch is on (None: none); what the engines'
# training loops check between steps.
_received: Optional[int] = None
_watching = False


def requested() -> bool:
  """Whether training should stop now to save (a signal was received)."""
  return _received is not None


def exit_code(signum: int) -> int:
  """The exit code of a run preempted by `signum` (the shell's 128 + N)."""
  return 128 + int(signum)


def _multi_worker_synchronous(config: Any, choices: Choices) -> bool:
  return bool(config.is_distributed) and (
      strategies.training_mode(config, choices.strategy) ==
      "multi_worker_mirrored")


class _Watch:
  """The handlers of one train() call and the signal they received."""

  def __init__(self):
    self.previous: Dict[int, Any] = {}

  def install(self) -> None:
    for signum in SIGNALS:
      previous = signal.getsignal(signum)
      if previous is None or previous == signal.SIG_IGN:
        continue  # Handled outside Python, or ignored on purpose.
      self.previous[signum] = previous
      signal.signal(signum, self._handle)

  def restore(self) -> None:
    for signum, previous in self.previous.items():
      signal.signal(signum, previous)
    self.previous = {}

  def _handle(self, signum: int, frame: Any) -> None:
    global _received
    if _received is not None:  # The second one: act as without the watch.
      previous = self.previous.get(signum, signal.SIG_DFL)
      self.restore()
      _act(signum, previous, frame, now=True)
      return
    del frame  # Kept, it would keep the training loop's objects alive.
    _received = signum
    name = signal.Signals(signum).name
    logging.warning(
        "Received %s: training stops after the step in progress and saves a "
        "checkpoint at the step reached; then %s acts (a second %s acts at "
        "once, without the save). Restart training to resume from there.",
        name, name, name)

  def act(self, signum: int, previous: Any) -> None:
    """After train(): the signal's own behaviour (see the module doc)."""
    # The frame argument may be None; the one the signal interrupted is gone.
    _act(signum, previous, None, now=False)


def _act(signum: int, previous: Any, frame: Any, now: bool) -> None:
  """What `signum` would have done with handler `previous`."""
  if callable(previous):
    previous(signum, frame)
    return
  if now:  # The default action (termination), at once.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return
  raise SystemExit(exit_code(signum))


@contextlib.contextmanager
def watch(config: Any, choices: Choices) -> Iterator[None]:
  """Catches SIGTERM/SIGINT while training; acts on them at the end.

  Args:
    config: the Estimator's RunConfig (`save_on_preemption`, the cluster).
    choices: the call's engine and strategy choice (the strategy flags).

  Yields:
    Nothing; inside, `requested()` says whether training should stop.

  Raises:
    SystemExit: (at the end) SIGTERM came, with no handler of the program's.
    KeyboardInterrupt: (at the end) SIGINT came, with Python's handler.
  """
  global _received, _watching
  if (_watching or not getattr(config, "save_on_preemption", True) or
      threading.current_thread() is not threading.main_thread() or
      _multi_worker_synchronous(config, choices)):
    yield
    return
  watcher = _Watch()
  _received = None
  _watching = True
  watcher.install()
  signum, previous = None, None
  try:
    yield
  finally:
    signum = _received
    previous = watcher.previous.get(signum) if signum is not None else None
    watcher.restore()
    _received = None
    _watching = False
  # Only when train() ended normally (an error propagates as it is).
  if signum is not None and previous is not None:
    logging.info("Training was stopped by %s and saved; the signal now "
                 "acts.", signal.Signals(signum).name)
    # The run's input pipeline is held in reference cycles; freed at
    # interpreter exit instead, an iterator waiting for its Python input
    # threads (py_function, generators) would wait forever, those threads
    # being unable to run then.
    gc.collect()
    watcher.act(signum, previous)
