"""`python -m estimator_compat` runs the launcher; importing it does not.

Tools that import every module of the package (the docs site's API pages,
test collection) must not start a program.
"""

import importlib
import sys

from estimator_compat.api import launcher


def test_importing_the_entry_module_runs_nothing(monkeypatch):
  calls = []
  monkeypatch.setattr(launcher, "main", lambda: calls.append("main"))
  monkeypatch.delitem(sys.modules, "estimator_compat.__main__",
                      raising=False)
  module = importlib.import_module("estimator_compat.__main__")
  assert module.launcher is launcher
  assert calls == []
