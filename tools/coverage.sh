#!/usr/bin/env bash
# Branch coverage (on demand; CI does not run it, see docs/development.md):
#   tools/coverage.sh            the tests Bazel runs (not tagged slow), ~2x
#                                their time
#   tools/coverage.sh --all      the whole suite (about 55 min on 2 cores)
#   tools/coverage.sh --under 85 the bar (default 85%)
#   tools/coverage.sh tests/test_binary.py ...
#                                only these test files or node ids (slow ones
#                                included); prints the table of what they
#                                cover and skips the bar (a part of the suite
#                                cannot judge it); exit status: pytest's
# Python subprocesses the tests start with this venv's python (the binary,
# cluster tasks, run_both's new side) are measured too: for the run, a .pth
# file in the venv's site-packages starts coverage at interpreter start when
# COVERAGE_PROCESS_START is set (and does nothing otherwise); it is removed
# on exit. Each process writes its own .coverage.* file (parallel = True),
# combined before the report.
# Prints the per-module table and the total, writes htmlcov/ for browsing and
# coverage.json, then fails (exit 1) when a public module is under the bar
# (tools/coverage_bar.py lists them; docs/development.md "Coverage").
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
marker=(-m "not slow")
bar=85
tests=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --all) marker=(); shift ;;
    --under) bar="$2"; shift 2 ;;
    -*) echo "usage: tools/coverage.sh [--all] [--under PERCENT]" \
             "[TEST_FILE_OR_NODE ...]" >&2; exit 2 ;;
    *) tests+=("$1"); shift ;;
  esac
done
if [ "${#tests[@]}" -gt 0 ]; then
  marker=()
fi
python="$root/.venv/bin/python"
site="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
pth="$site/estimator_compat_coverage.pth"
trap 'rm -f "$pth"' EXIT
# One line, as site.py runs it: inert unless the variable is set.
echo 'import os; os.environ.get("COVERAGE_PROCESS_START") and __import__("coverage").process_startup()' > "$pth"
rm -f .coverage .coverage.*
# pytest runs under coverage too (through the .pth), so no --cov: pytest-cov's
# own subprocess hook (COV_CORE_*) stays off and each process starts coverage
# once. COVERAGE_FILE is absolute: tests start subprocesses in other folders.
set +e
COVERAGE_PROCESS_START="$root/tools/coveragerc" COVERAGE_FILE="$root/.coverage" \
  "$python" -m pytest -q -n 2 --dist loadfile -p no:cacheprovider \
  "${marker[@]}" "${tests[@]}"
status=$?
set -e
rm -f "$pth"
"$python" -m coverage combine --rcfile=tools/coveragerc -q
"$python" -m coverage report --rcfile=tools/coveragerc | tee /tmp/coverage_report.txt
"$python" -m coverage html --rcfile=tools/coveragerc -q
"$python" -m coverage json --rcfile=tools/coveragerc -q -o coverage.json
if [ "${#tests[@]}" -gt 0 ]; then
  echo "coverage.sh: part of the suite ran; the bar is not judged."
  exit "$status"
fi
"$python" tools/coverage_bar.py coverage.json --bar "$bar"
