"""CI runs each test once: pytest the slow part, Bazel the rest (BUILD)."""

import ast
import glob
import os
import subprocess
import sys

from tests import conftest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _collected(*files, **env):
  environ = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **env)
  environ.pop("ESTIMATOR_COMPAT_BAZEL_PART", None)
  environ.update(env)
  done = subprocess.run(
      [sys.executable, "-m", "pytest", "--collect-only", "-q",
       "-p", "no:cacheprovider", *files], cwd=ROOT, env=environ,
      capture_output=True, text=True, timeout=300, check=False)
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  return {line.split("::")[1].split("[")[0]
          for line in done.stdout.splitlines() if "::" in line}


def test_build_slow_tests_are_read_from_build():
  slow = conftest.bazel_slow_files()
  assert {"test_cluster", "test_goldens", "test_ci_split"} <= slow
  assert "test_spec" not in slow and "test_strategies" not in slow


def test_pytest_part_keeps_slow_files_and_slow_functions_only():
  files = ["tests/test_strategies.py", "tests/test_ps_fetch.py"]
  everything = _collected(*files)
  pytest_part = _collected(*files, ESTIMATOR_COMPAT_BAZEL_PART="skip")
  # test_strategies is a Bazel file: only its slow-marked function stays.
  assert "test_no_cluster_no_flag_is_default" in everything
  assert pytest_part == {"test_tf1_mode_strategy_objects_run_as_the_estimator"}
  assert _collected("tests/test_ci_split.py",
                    ESTIMATOR_COMPAT_BAZEL_PART="skip") == {
                        "test_build_slow_tests_are_read_from_build",
                        "test_pytest_part_keeps_slow_files_and_slow_functions_only",
                        "test_bazel_tests_have_every_file_they_name",
                        "test_every_bazel_file_keeps_a_test_that_is_not_marked_slow"}


def _build_targets():
  """BUILD's targets as {name: (their srcs and data, their deps)}.

  BUILD is Starlark that Python runs as well: its rules are evaluated here
  with glob() over this checkout.
  """
  targets = {}

  def expand(patterns, exclude=()):
    def matching(pattern):
      return {os.path.relpath(f, ROOT)
              for f in glob.glob(os.path.join(ROOT, pattern), recursive=True)
              if os.path.isfile(f)}
    files = set().union(*map(matching, patterns))
    return sorted(files.difference(*map(matching, exclude)))

  def rule(name, srcs=(), data=(), deps=(), **unused):
    targets[name] = (set(srcs) | set(data), [d.lstrip(":") for d in deps])

  scope = dict(glob=expand, package=lambda **unused: None, py_library=rule,
               py_binary=rule, py_test=rule)
  with open(os.path.join(ROOT, "BUILD"), encoding="utf-8") as f:
    exec(compile(f.read(), "BUILD", "exec"), scope)  # pylint: disable=exec-used
  return targets


def _runfiles(targets, name):
  files, todo, seen = set(), [name], set()
  while todo:
    target = todo.pop()
    if target not in seen:
      seen.add(target)
      files |= targets[target][0]
      todo.extend(targets[target][1])
  return files


def _named_paths(test_file):
  """Repository paths a test file names: a string constant such as
  "tools/x.py", or the constant parts of an os.path.join(ROOT, "tools",
  "x.py") call."""
  with open(test_file, encoding="utf-8") as f:
    tree = ast.parse(f.read())
  names = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
      if "/" in node.value and not node.value.startswith("/"):
        names.add(node.value)
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
          and node.func.attr == "join"):
      parts = [a.value for a in node.args
               if isinstance(a, ast.Constant) and isinstance(a.value, str)]
      if parts:
        names.add(os.path.join(*parts))
  return {n for n in names if os.path.exists(os.path.join(ROOT, n))}


def test_bazel_tests_have_every_file_they_name():
  # Three CI runs failed on a file a new test reads but the Bazel target
  # lacked (its runfiles hold only what BUILD lists).
  targets = _build_targets()
  slow = conftest.bazel_slow_files()
  missing = []
  for path in sorted(glob.glob(os.path.join(ROOT, "tests", "test_*.py"))):
    name = os.path.basename(path)[:-len(".py")]
    if name in slow:
      continue
    files = _runfiles(targets, name)
    for named in sorted(_named_paths(path)):
      if os.path.isdir(os.path.join(ROOT, named)):
        found = any(f.startswith(named.rstrip("/") + "/") for f in files)
      else:
        found = os.path.normpath(named) in files
      if not found:
        missing.append(f"{name}: {named}")
  assert len(targets) > 60  # Every py_test was read.
  assert not missing, ("Files the Bazel targets lack (add them to the "
                       "py_test data in BUILD): " + ", ".join(missing))


def _marked_slow(node):
  return any("slow" in ast.unparse(decorator) for decorator in
             getattr(node, "decorator_list", ()))


def test_every_bazel_file_keeps_a_test_that_is_not_marked_slow():
  # Bazel runs a file's tests without the slow-marked ones; a file where all
  # are marked collects none, and pytest's exit code 5 fails its target.
  slow_files = conftest.bazel_slow_files()
  empty = []
  for path in sorted(glob.glob(os.path.join(ROOT, "tests", "test_*.py"))):
    name = os.path.basename(path)[:-3]
    if name in slow_files:
      continue
    with open(path) as f:
      tree = ast.parse(f.read())
    if any("pytestmark" in ast.unparse(node) and "slow" in ast.unparse(node)
           for node in tree.body if isinstance(node, ast.Assign)):
      empty.append(name)
      continue
    tests = [node for node in ast.walk(tree)
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
             and node.name.startswith("test")]
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)
               and _marked_slow(node)]
    slow_in_classes = {id(n) for c in classes for n in ast.walk(c)}
    if tests and all(_marked_slow(t) or id(t) in slow_in_classes
                     for t in tests):
      empty.append(name)
  assert not empty, (f"{empty}: every test is marked slow; add the file to "
                     "BUILD's SLOW_TESTS")
