#!/usr/bin/env bash
# Branch coverage on demand (CI measures its own run: tools/dev.sh test):
#   tools/coverage.sh            the tests Bazel runs (not tagged slow), ~2x
#                                their time
#   tools/coverage.sh --all      the whole suite (about 55 min on 2 cores)
#   tools/coverage.sh --under 85 the bar (default 85%)
#   tools/coverage.sh tests/test_binary.py ...
#                                only these test files or node ids (slow ones
#                                included); prints the table of what they
#                                cover and skips the bar (a part of the suite
#                                cannot judge it); exit status: pytest's
# Subprocesses are measured too (tools/coverage_lib.sh says how).
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
# shellcheck source=tools/coverage_lib.sh
source tools/coverage_lib.sh
trap coverage_stop EXIT
coverage_start "$root"
set +e
env "${COVERAGE_ENV[@]}" "$coverage_python" -m pytest -q -n 2 --dist loadfile \
  -p no:cacheprovider "${marker[@]}" "${tests[@]}"
status=$?
set -e
coverage_report table
if [ "${#tests[@]}" -gt 0 ]; then
  echo "coverage.sh: part of the suite ran; the bar is not judged."
  exit "$status"
fi
coverage_bar "$bar"
