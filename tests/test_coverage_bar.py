"""tools/coverage_bar.py: tools/coverage.sh fails when a public module is low.

The check reads a `coverage json` report; these tests plant small fake
reports (no coverage run), so they take well under a second each.
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tools", "coverage_bar.py")


def _report(tmp_path, percents):
  files = {path: {"summary": {"percent_covered": percent}}
           for path, percent in percents.items()}
  path = tmp_path / "coverage.json"
  path.write_text(json.dumps({"files": files, "totals": {}}))
  return str(path)


def _run(*args):
  return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True,
                        text=True, timeout=60, check=False)


@pytest.mark.parametrize("percents, status, said", [
    # One public module at 50%: listed with its figure, the rest not.
    ({"estimator_compat/estimator.py": 97.0,
      "estimator_compat/front/fn_args.py": 50.0,
      "migration/report.py": 85.0},
     1, ["1 of 3 public modules under 85%:",
         "  estimator_compat/front/fn_args.py 50.00%"]),
    # Every module at the bar or over it (__init__ and __main__ count).
    ({"estimator_compat/__init__.py": 100.0,
      "estimator_compat/__main__.py": 85.0,
      "migration/scan/fixer.py": 91.3},
     0, ["All 3 public modules reach 85%."]),
])
def test_the_check_lists_each_public_module_under_the_bar(tmp_path, percents,
                                                          status, said):
  done = _run(_report(tmp_path, percents))
  assert done.returncode == status, done.stdout + done.stderr
  assert done.stdout.splitlines() == said


def test_just_under_the_bar_fails_though_the_table_rounds_it_up(tmp_path):
  report = _report(tmp_path, {"estimator_compat/spec.py": 84.96})
  done = _run(report, "--bar", "85")
  assert done.returncode == 1 and "spec.py 84.96%" in done.stdout, done.stdout


def test_the_bar_is_an_option(tmp_path):
  report = _report(tmp_path, {"estimator_compat/spec.py": 70.0})
  assert _run(report, "--bar", "60").returncode == 0
  assert _run(report, "--bar", "90").returncode == 1


def test_private_and_outside_modules_do_not_count(tmp_path):
  report = _report(tmp_path, {
      "estimator_compat/_private.py": 10.0,
      "estimator_compat/_impl/model.py": 10.0,
      "tools/coverage_bar.py": 10.0,
      "tests/test_x.py": 10.0,
      "migration/report.py": 90.0,
  })
  done = _run(report)
  assert done.returncode == 0, done.stdout
  assert "All 1 public modules reach 85%" in done.stdout


def test_a_report_that_is_not_coverage_json_is_an_error(tmp_path):
  path = tmp_path / "coverage.json"
  path.write_text(json.dumps({"meta": {}}))
  done = _run(str(path))
  assert done.returncode == 2
  assert "no 'files' table" in done.stderr and "coverage json" in done.stderr
  missing = _run(str(tmp_path / "absent.json"))
  assert missing.returncode == 2 and "cannot read" in missing.stderr


def _fake_root(tmp_path):
  """A repository root with a package of two modules and the real rcfile."""
  root = tmp_path / "root"
  (root / "tools").mkdir(parents=True)
  (root / "tools" / "coveragerc").write_text(
      open(os.path.join(ROOT, "tools", "coveragerc")).read())
  package = root / "estimator_compat"
  package.mkdir()
  (package / "__init__.py").write_text("")
  (package / "half.py").write_text(
      "def sign(x):\n"
      "  if x > 0:\n"
      "    return 1\n"
      "  return -1\n")
  (root / "run.py").write_text(
      "import sys\n"
      "from estimator_compat import half\n"
      "print(half.sign(int(sys.argv[1])))\n")
  (package / "never.py").write_text("def f():\n  return 1\n")
  return root


def _measure(root, cwd, data_dir, arg):
  """Runs run.py ARG under coverage from `cwd`, its data in `data_dir`."""
  env = {k: v for k, v in os.environ.items()
         if not k.startswith("COVERAGE_")}
  env["PYTHONPATH"] = str(cwd)
  subprocess.run(
      [sys.executable, "-m", "coverage", "run",
       f"--rcfile={root / 'tools' / 'coveragerc'}", "run.py", arg],
      cwd=cwd, check=True, timeout=120,
      env=dict(env, COVERAGE_FILE=str(data_dir / ".coverage")))


def _join_and_judge(root, bazel_dir):
  """tools/coverage_lib.sh's report and bar, as CI calls them."""
  env = {k: v for k, v in os.environ.items()
         if not k.startswith("COVERAGE_")}
  script = (
      f"source {os.path.join(ROOT, 'tools', 'coverage_lib.sh')}\n"
      f"coverage_root={root} coverage_python={sys.executable} "
      f"coverage_bazel_dir={bazel_dir}\n"
      "coverage_report total && coverage_bar 85\n")
  return subprocess.run(["bash", "-c", script], capture_output=True,
                        text=True, timeout=120, env=env, check=False)


def _runfiles_tree(root, tmp_path):
  """A tree of file symlinks to `root`, as Bazel lays out a test's runfiles.

  Bazel runs a py_test from its runfiles folder, named after the workspace,
  where each source file is a symlink into the checkout and each folder a
  real one: the package folder is found next to the current directory, while
  the code it runs resolves to the checkout's files.
  """
  main = tmp_path / "test_x.runfiles" / "estimator_compat"
  for path in [root / "run.py", *sorted((root / "estimator_compat").iterdir())]:
    link = main / path.relative_to(root)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(path)
  return main


def test_ci_joins_both_parts_and_fails_under_the_bar(tmp_path):
  # The functions that join a pytest part and a Bazel part (tools/coverage_lib.sh)
  # on data as its two parts leave it: pytest's in the root, Bazel's in a
  # folder of its own. half.py is covered only by the two parts together.
  root = _fake_root(tmp_path)
  bazel_dir = tmp_path / "bazel"
  bazel_dir.mkdir()
  for data_dir, arg in ((root, "1"), (bazel_dir, "-1")):
    _measure(root, root, data_dir, arg)
  done = _join_and_judge(root, bazel_dir)
  assert done.returncode == 1, done.stdout + done.stderr
  lines = done.stdout.splitlines()
  assert lines[0].split()[0] == "Name" and lines[1].startswith("TOTAL"), lines
  assert "1 of 3 public modules under 85%" in done.stdout, done.stdout
  assert "estimator_compat/never.py 0.00%" in done.stdout
  assert "half.py" not in done.stdout
  report = json.loads((root / "coverage.json").read_text())
  assert report["files"]["estimator_compat/half.py"]["summary"][
      "percent_covered"] == 100.0
  assert not bazel_dir.exists()


def test_bazels_part_counts_though_it_runs_from_runfiles(tmp_path):
  # The first whole CI run under coverage lost most of Bazel's part: with
  # `source = estimator_compat`, coverage took the runfiles' package folder
  # for the code to measure, while the code ran (resolved through the
  # symlinks) from the checkout, so every line was left out and only the
  # file names were recorded. Here the only run is Bazel-like.
  root = _fake_root(tmp_path)
  bazel_dir = tmp_path / "bazel"
  bazel_dir.mkdir()
  _measure(root, _runfiles_tree(root, tmp_path), bazel_dir, "1")
  _measure(root, _runfiles_tree(root, tmp_path / "second"), bazel_dir, "-1")
  done = _join_and_judge(root, bazel_dir)
  assert done.returncode == 1, done.stdout + done.stderr
  report = json.loads((root / "coverage.json").read_text())
  assert {"estimator_compat/half.py", "estimator_compat/never.py"} <= set(
      report["files"]), report["files"]
  assert report["files"]["estimator_compat/half.py"]["summary"][
      "percent_covered"] == 100.0, report["files"]
  assert "estimator_compat/never.py 0.00%" in done.stdout
