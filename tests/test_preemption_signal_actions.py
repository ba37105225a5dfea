"""What a preemption signal does once train() has saved (front/preemption.py).

The signal handling itself runs in-process here (the handler is called
directly, no signal is sent): a second signal acts at once through the
program's own handler; after the save a default SIGTERM exits with 143 and
a default action sent "now" re-raises the signal with the default handler
(the kill is intercepted).
"""

import signal

import pytest

from estimator_compat.front import preemption


@pytest.fixture(autouse=True)
def no_signal_received(monkeypatch):
  monkeypatch.setattr(preemption, "_received", None)


def test_the_exit_code_is_the_shells():
  assert preemption.exit_code(signal.SIGTERM) == 143
  assert preemption.exit_code(signal.SIGINT) == 130


def test_the_first_signal_asks_to_stop_the_second_calls_the_program(
    monkeypatch):
  calls = []
  installed = {}
  monkeypatch.setattr(preemption.signal, "getsignal",
                      lambda signum: lambda s, f: calls.append((s, f)))
  monkeypatch.setattr(preemption.signal, "signal",
                      lambda signum, handler: installed.update({signum:
                                                                handler}))
  watch = preemption._Watch()  # pylint: disable=protected-access
  watch.install()
  assert set(installed) == set(preemption.SIGNALS)
  watch._handle(signal.SIGTERM, "frame")  # pylint: disable=protected-access
  assert preemption.requested() and not calls
  watch._handle(signal.SIGTERM, "frame")  # pylint: disable=protected-access
  assert calls == [(signal.SIGTERM, "frame")]
  # The program's handlers are back.
  assert watch.previous == {}


def test_ignored_signals_are_left_alone(monkeypatch):
  monkeypatch.setattr(preemption.signal, "getsignal",
                      lambda signum: signal.SIG_IGN)
  watch = preemption._Watch()  # pylint: disable=protected-access
  watch.install()
  assert watch.previous == {}


def test_after_the_save_a_default_sigterm_exits_143():
  watch = preemption._Watch()  # pylint: disable=protected-access
  with pytest.raises(SystemExit) as raised:
    watch.act(signal.SIGTERM, signal.SIG_DFL)
  assert raised.value.code == 143


def test_a_second_default_signal_kills_at_once(monkeypatch):
  events = []
  monkeypatch.setattr(preemption.signal, "signal",
                      lambda signum, handler: events.append(("set", handler)))
  monkeypatch.setattr(preemption.os, "kill",
                      lambda pid, signum: events.append(("kill", signum)))
  preemption._act(signal.SIGTERM, signal.SIG_DFL, None, now=True)  # pylint: disable=protected-access
  assert events == [("set", signal.SIG_DFL), ("kill", signal.SIGTERM)]
