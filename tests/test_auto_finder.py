"""estimator_compat.api.auto's import hook, in-process with stand-ins.

tests/test_zero_edits.py runs it for real in fresh processes; here each
branch of the finder and of activate() runs with a recorded install().
"""

import importlib.util
import sys
import types

import pytest

from estimator_compat.api import auto


@pytest.fixture
def installs(monkeypatch):
  """Calls of auto's install(), recorded instead of made."""
  calls = []
  monkeypatch.setattr(auto, "_install", lambda: calls.append("install"))
  yield calls
  for finder in [f for f in sys.meta_path if isinstance(f, auto.Finder)]:
    finder.remove()


@pytest.mark.parametrize("value,expected", [
    ("1", True), ("yes", True), (" TRUE ", True), ("", False), ("0", False),
    ("false", False), ("No", False), ("off", False)])
def test_enabled_reads_the_variable(value, expected):
  assert auto.enabled({auto.ENV: value}) is expected


def test_enabled_is_off_without_the_variable(monkeypatch):
  monkeypatch.delenv(auto.ENV, raising=False)
  assert not auto.enabled()
  assert not auto.enabled({})


def test_activate_off_does_nothing(monkeypatch, installs):
  monkeypatch.setenv(auto.ENV, "0")
  auto.activate()
  assert installs == []
  assert not any(isinstance(f, auto.Finder) for f in sys.meta_path)


def test_activate_after_tensorflow_installs_at_once(monkeypatch, installs):
  monkeypatch.setenv(auto.ENV, "1")
  monkeypatch.setitem(sys.modules, "tensorflow", sys.modules.get(
      "tensorflow") or types.ModuleType("tensorflow"))
  auto.activate()
  assert installs == ["install"]
  assert not any(isinstance(f, auto.Finder) for f in sys.meta_path)


def test_activate_before_tensorflow_puts_one_finder_first(monkeypatch,
                                                          installs):
  monkeypatch.setenv(auto.ENV, "1")
  monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
  auto.activate()
  auto.activate()
  finders = [f for f in sys.meta_path if isinstance(f, auto.Finder)]
  assert len(finders) == 1 and sys.meta_path[0] is finders[0]
  assert installs == []


def test_finder_ignores_other_modules(installs):
  finder = auto.Finder()
  sys.meta_path.insert(0, finder)
  assert finder.find_spec("numpy") is None
  assert finder in sys.meta_path and installs == []


class _Loader:
  """TensorFlow's loader, as far as the finder uses it."""

  def __init__(self):
    self.executed = []

  def create_module(self, spec):
    del spec
    return None

  def exec_module(self, module):
    self.executed.append(module.__name__)


def test_finder_installs_right_after_tensorflow_loads(monkeypatch, installs):
  loader = _Loader()
  spec = importlib.util.spec_from_loader("tensorflow", loader)
  monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
  finder = auto.Finder()
  sys.meta_path.insert(0, finder)
  found = finder.find_spec("tensorflow")
  assert finder not in sys.meta_path  # acts once
  assert found is spec and isinstance(found.loader, auto._InstallAfterLoad)
  module = types.ModuleType("tensorflow")
  module.__spec__ = found
  assert found.loader.create_module(found) is None
  found.loader.exec_module(module)
  assert loader.executed == ["tensorflow"] and installs == ["install"]
  # The module keeps TensorFlow's own loader, as without the hook.
  assert module.__loader__ is loader and module.__spec__.loader is loader


def test_finder_leaves_a_spec_it_cannot_wrap(monkeypatch, installs):
  finder = auto.Finder()
  monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
  assert finder.find_spec("tensorflow") is None
  legacy = importlib.util.spec_from_loader("tensorflow", object())
  monkeypatch.setattr(importlib.util, "find_spec", lambda name: legacy)
  assert finder.find_spec("tensorflow") is legacy
  assert type(legacy.loader) is object  # pylint: disable=unidiomatic-typecheck
  assert installs == []


def test_finder_hands_over_the_estimator_module_install_made(monkeypatch):
  previous = _Loader()
  made = types.ModuleType("tensorflow_estimator")
  made.__spec__ = importlib.util.spec_from_loader("tensorflow_estimator",
                                                  previous)
  calls = []

  def install():
    calls.append("install")
    sys.modules["tensorflow_estimator"] = made

  monkeypatch.setattr(auto, "_install", install)
  monkeypatch.delitem(sys.modules, "tensorflow_estimator", raising=False)
  found = auto.Finder().find_spec("tensorflow_estimator")
  assert calls == ["install"] and found is made.__spec__
  assert isinstance(found.loader, auto._AlreadyLoaded)
  assert found.loader.create_module(found) is made
  found.loader.exec_module(made)
  assert made.__spec__.loader is previous and made.__loader__ is previous
  assert previous.executed == []  # not run a second time


def test_finder_finds_nothing_when_install_made_no_estimator(monkeypatch,
                                                             installs):
  monkeypatch.delitem(sys.modules, "tensorflow_estimator", raising=False)
  assert auto.Finder().find_spec("tensorflow_estimator") is None
  assert installs == ["install"]
