"""tools/coverage_bar.py: tools/coverage.sh fails when a public module is low.

The check reads a `coverage json` report; these tests plant small fake
reports (no coverage run), so they take well under a second each.
"""

import json
import os
import subprocess
import sys

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


def test_a_public_module_at_50_percent_fails_the_check(tmp_path):
  report = _report(tmp_path, {
      "estimator_compat/estimator.py": 97.0,
      "estimator_compat/front/fn_args.py": 50.0,
      "migration/report.py": 85.0,
  })
  done = _run(report)
  assert done.returncode == 1, done.stdout + done.stderr
  assert "1 of 3 public modules under 85%" in done.stdout, done.stdout
  assert "estimator_compat/front/fn_args.py 50.00%" in done.stdout
  assert "estimator.py" not in done.stdout and "report.py" not in done.stdout


def test_every_module_at_the_bar_passes(tmp_path):
  report = _report(tmp_path, {
      "estimator_compat/__init__.py": 100.0,
      "estimator_compat/__main__.py": 85.0,
      "migration/scan/fixer.py": 91.3,
  })
  done = _run(report)
  assert done.returncode == 0, done.stdout + done.stderr
  assert "All 3 public modules reach 85%" in done.stdout


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
