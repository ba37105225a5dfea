"""pytest plugin for tools/conformance.py: one run of the Estimator's tests.

Loaded with `-p conformance_plugin` (tools/ on PYTHONPATH). Configured by
environment variables set by tools/conformance.py:

  CONFORMANCE_INSTALL=1    import estimator_compat and call install() before
                           the test files are imported (unset: the reference
                           run on the real Estimator).
  CONFORMANCE_RESULTS      file to append one JSON line per test to.
  CONFORMANCE_ONLY         file of test ids: run only these.
  CONFORMANCE_SKIP         file of test ids not to run (already done).
  CONFORMANCE_TF1=1        run under TF1 behaviour (disable_v2_behavior()
                           before install() and the test file's import).
  CONFORMANCE_TIMEOUT      seconds a test may take; then the process dumps
                           the stacks to CONFORMANCE_RESULTS + ".hang" and
                           exits, and the runner carries on after that test.
"""

import faulthandler
import importlib.util
import json
import os
import sys
import time
import types

import pytest

# Modules the Estimator's test files import at module level that
# estimator_compat does not provide. The harness registers them empty so the
# unchanged files can be collected; a test that uses them fails on the missing
# attribute. (install() itself leaves them unregistered.)
HARNESS_STUBS = (
    "tensorflow_estimator.python.estimator.canned",
    "tensorflow_estimator.python.estimator.canned.dnn",
    "tensorflow_estimator.python.estimator.canned.dnn_testing_utils",
    "tensorflow_estimator.python.estimator.canned.prediction_keys",
    # TensorFlow's own half of the Estimator's distribute coordinator,
    # removed from TF 2.21 (distribute_strategy_estimator_training_test
    # imports it at module level; its tests calling it are excluded).
    "tensorflow.python.distribute.estimator_training",
    # The TF1 head module (its functions are all private: _regression_head
    # and the like), imported at module level by the canned/v1 test files.
    "tensorflow_estimator.python.estimator.canned.head",
    # TPU test files' module-level imports: the real package's modules that
    # no tf.estimator API name exports (their tests are excluded), and
    # TensorFlow's tpu_embedding, removed from TF 2.21.
    "tensorflow_estimator.python.estimator.tpu.iteration_count_estimator",
    "tensorflow_estimator.python.estimator.tpu.error_handling",
    "tensorflow_estimator.python.estimator.tpu._tpu_estimator_embedding",
    "tensorflow.python.tpu.tpu_embedding",
)


def _stub_getattr(module_name):

  def module_getattr(name):
    raise AttributeError(
        f"module {module_name!r} has no attribute {name!r}: estimator_compat "
        "does not provide this module (conformance harness stub)")

  return module_getattr


# Test helper modules of the Estimator (not tests themselves) that the test
# files import by the real package's path; tools/conformance.py copies them
# next to the tests, unchanged, and the harness loads them under that path.
SUPPORT_MODULES = (
    "canned/dnn_testing_utils.py",
    "canned/linear_testing_utils.py",
    "hooks/fake_summary_writer.py",
    "canned/v1/dnn_testing_utils_v1.py",
    "canned/v1/linear_testing_utils_v1.py",
)
_BASE = "tensorflow_estimator.python.estimator"


def _register_packages(name):
  """Empty packages for `name` and its parents where none is imported."""
  if name in sys.modules:
    return
  parent, _, child = name.rpartition(".")
  if parent:
    _register_packages(parent)
  module = types.ModuleType(name)
  module.__path__ = []
  sys.modules[name] = module
  if parent:
    setattr(sys.modules[parent], child, module)


def _load_support_modules():
  """The copied helper modules, under the real package's module paths."""
  for relative in SUPPORT_MODULES:
    path = os.path.join(os.getcwd(), relative)
    name = _BASE + "." + relative[:-3].replace("/", ".")
    if not os.path.exists(path) or name in sys.modules:
      continue
    _register_packages(name.rpartition(".")[0])
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)
    try:
      spec.loader.exec_module(module)
    except Exception:  # pylint: disable=broad-except
      # A helper importing what we lack: the tests using it fail at import.
      del sys.modules[name]


def _install_estimator_compat():
  """install() and the harness stubs, before any test file is imported."""
  import estimator_compat  # pylint: disable=g-import-not-at-top
  estimator_compat.install()
  # The stubs the helper modules import (canned.head) first, then the helper
  # modules, then the rest: a stub stands in for a helper only if it fails.
  helpers = {_BASE + "." + r[:-3].replace("/", ".") for r in SUPPORT_MODULES}
  _register_stubs([n for n in HARNESS_STUBS if n not in helpers])
  _load_support_modules()
  _register_stubs(HARNESS_STUBS)


def _register_stubs(names):
  for name in names:
    if name in sys.modules:
      continue
    module = types.ModuleType(name)
    module.__path__ = []
    module.__getattr__ = _stub_getattr(name)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)


# Third-party modules a test file imports at module level for its benchmark
# classes only (tf.test.Benchmark, never collected as tests): kmeans_test's
# `from sklearn.cluster import KMeans`. Where one is not installed (on either
# side), the harness registers it with the named classes raising ImportError
# when used, so the file's tests can be collected.
BENCHMARK_ONLY_IMPORTS = {"sklearn.cluster": ("KMeans",)}


def _absent_class(module_name, class_name):

  def refuse(*args, **kwargs):
    del args, kwargs
    raise ImportError(f"{module_name} is not installed: {class_name} is only "
                      "used by the benchmarks (conformance harness)")

  return type(class_name, (), {"__init__": refuse})


def _register_benchmark_only_imports():
  for name, classes in BENCHMARK_ONLY_IMPORTS.items():
    if importlib.util.find_spec(name.split(".")[0]) is not None:
      continue
    parts = name.split(".")
    for depth in range(1, len(parts) + 1):
      module_name = ".".join(parts[:depth])
      if module_name not in sys.modules:
        module = types.ModuleType(module_name)
        module.__path__ = []
        sys.modules[module_name] = module
        if depth > 1:
          setattr(sys.modules[".".join(parts[:depth - 1])], parts[depth - 1],
                  module)
    for class_name in classes:
      setattr(sys.modules[name], class_name, _absent_class(name, class_name))


def _where(longrepr):
  """` [at path:line]`: the deepest estimator_compat frame, else the last."""
  entries = getattr(getattr(longrepr, "reprtraceback", None), "reprentries",
                    None) or []
  places = []
  for entry in entries:
    loc = getattr(entry, "reprfileloc", None)
    if loc is not None:
      places.append(f"{loc.path}:{loc.lineno}")
  ours = [p for p in places if "estimator_compat" in p]
  place = (ours or places or [""])[-1]
  return f" [at {place}]" if place else ""


def _read_ids(env_name):
  path = os.environ.get(env_name)
  if not path:
    return None
  with open(path) as f:
    return {line.strip() for line in f if line.strip()}


class _Recorder:
  """Writes each test's start and outcome, and arms the per-test timeout."""

  def __init__(self, results_path, timeout):
    self._results = open(results_path, "a")  # pylint: disable=consider-using-with
    self._hang = open(results_path + ".hang", "a")  # pylint: disable=consider-using-with
    self._timeout = timeout
    self._outcome = {}

  def _write(self, record):
    self._results.write(json.dumps(record) + "\n")
    self._results.flush()

  @pytest.hookimpl(hookwrapper=True)
  def pytest_runtest_protocol(self, item, nextitem):
    del nextitem
    self._write({"start": item.nodeid, "time": time.time()})
    self._hang.write(f"\n=== {item.nodeid}\n")
    self._hang.flush()
    if self._timeout:
      faulthandler.dump_traceback_later(self._timeout, exit=True,
                                        file=self._hang)
    start = time.time()
    yield
    faulthandler.cancel_dump_traceback_later()
    outcome, error = self._outcome.pop(item.nodeid, ("error", "no report"))
    self._write({"id": item.nodeid, "outcome": outcome, "error": error,
                 "seconds": round(time.time() - start, 2)})

  def pytest_runtest_logreport(self, report):
    outcome, error = self._outcome.get(report.nodeid, ("passed", ""))
    if report.skipped:
      outcome, error = "skipped", ""
    elif report.failed:
      outcome = "failed" if report.when == "call" else "error"
      crash = getattr(report.longrepr, "reprcrash", None)
      error = (crash.message if crash else str(report.longrepr))
      error = error.strip().splitlines()[0][:300] if error.strip() else ""
      error += _where(report.longrepr)
    elif outcome in ("failed", "error", "skipped"):
      return  # Keep the first bad outcome (e.g. call failed, teardown ok).
    self._outcome[report.nodeid] = (outcome, error)

  def pytest_collectreport(self, report):
    if report.failed:
      self._write({"collect_error": report.nodeid,
                   "error": str(report.longrepr)[-2000:]})

  def pytest_sessionfinish(self):
    self._write({"end": True})


def _parse_absl_flags():
  """absl's flags parsed with the program name only, as tf.test.main would.

  Test files that read absl flags (tf.distribute's test combinations read
  FLAGS.tpu and the like) would otherwise parse sys.argv on first use and
  reject pytest's own arguments (`Unknown command line flag 'p'`), on the
  real Estimator as here.
  """
  from absl import flags  # pylint: disable=g-import-not-at-top
  if not flags.FLAGS.is_parsed():
    flags.FLAGS(sys.argv[:1])


def _disable_v2_behavior():
  """TF1 behaviour for the whole process, as a TF1 program sets it first."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.compat.v1.disable_v2_behavior()


def pytest_configure(config):
  _parse_absl_flags()
  _register_benchmark_only_imports()
  if os.environ.get("CONFORMANCE_TF1") == "1":
    _disable_v2_behavior()
  if os.environ.get("CONFORMANCE_INSTALL") == "1":
    _install_estimator_compat()
  results = os.environ.get("CONFORMANCE_RESULTS")
  if results:
    timeout = float(os.environ.get("CONFORMANCE_TIMEOUT", "0"))
    config.pluginmanager.register(_Recorder(results, timeout),
                                  "conformance_recorder")


def pytest_collection_modifyitems(config, items):
  only = _read_ids("CONFORMANCE_ONLY")
  skip = _read_ids("CONFORMANCE_SKIP") or set()
  kept, dropped = [], []
  for item in items:
    if item.nodeid in skip or (only is not None and item.nodeid not in only):
      dropped.append(item)
    else:
      kept.append(item)
  if dropped:
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept
