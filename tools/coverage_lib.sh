# Branch coverage, shared by tools/coverage.sh (on demand) and tools/dev.sh
# test (CI): sourced, not run. Config: tools/coveragerc.
#
# Every Python process of the project's venv is measured: for the run, a .pth
# file in the venv's site-packages starts coverage at interpreter start when
# COVERAGE_PROCESS_START is set (and does nothing otherwise): pytest, its
# xdist workers, Bazel's py_tests and every process they start (the binary,
# cluster tasks, run_both's new side). Each process writes its own
# .coverage.* file (parallel = True), joined by coverage_report.
#
#   coverage_start ROOT   writes the .pth, clears old data, and sets
#                         COVERAGE_ENV (VAR=VALUE words for `env`, for pytest)
#                         and COVERAGE_BAZEL_FLAGS (for `bazel test`)
#   coverage_stop         removes the .pth (idempotent: call it from a trap)
#   coverage_report       coverage_stop, then joins the data and writes
#                         coverage.json; prints the table (with "table") or
#                         only its TOTAL line (with "total")
#   coverage_bar BAR      exit status 1 when a public module is under BAR %
#                         (tools/coverage_bar.py; docs/development.md)

coverage_tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

coverage_start() {
  coverage_root="$1"
  coverage_python="$coverage_root/.venv/bin/python"
  local site
  site="$("$coverage_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  coverage_pth="$site/estimator_compat_coverage.pth"
  # One line, as site.py runs it: inert unless the variable is set.
  echo 'import os; os.environ.get("COVERAGE_PROCESS_START") and __import__("coverage").process_startup()' > "$coverage_pth"
  rm -f "$coverage_root/.coverage" "$coverage_root"/.coverage.*
  # Bazel's sandbox leaves the workspace read-only: its tests write their
  # data to a folder of their own, made writable for them.
  coverage_bazel_dir="$(mktemp -d)"
  local rc="$coverage_root/tools/coveragerc"
  # No --cov for pytest: pytest-cov's own subprocess hook (COV_CORE_*) stays
  # off and each process starts coverage once. COVERAGE_FILE is absolute:
  # tests start subprocesses in other folders.
  COVERAGE_ENV=(COVERAGE_PROCESS_START="$rc"
    COVERAGE_FILE="$coverage_root/.coverage")
  # A cached test result would leave its test's lines out: every test runs.
  COVERAGE_BAZEL_FLAGS=(--nocache_test_results
    --sandbox_writable_path="$coverage_bazel_dir"
    --test_env=COVERAGE_PROCESS_START="$rc"
    --test_env=COVERAGE_FILE="$coverage_bazel_dir/.coverage")
}

coverage_stop() {
  if [ -n "${coverage_pth:-}" ]; then
    rm -f "$coverage_pth"
  fi
}

coverage_report() {
  coverage_stop
  local rc="$coverage_root/tools/coveragerc"
  (
    cd "$coverage_root"
    "$coverage_python" -m coverage combine --rcfile="$rc" -q "$coverage_root" \
      "$coverage_bazel_dir"
    rm -rf "$coverage_bazel_dir"
    if [ "$1" = table ]; then
      "$coverage_python" -m coverage report --rcfile="$rc"
      "$coverage_python" -m coverage html --rcfile="$rc" -q
    else
      "$coverage_python" -m coverage report --rcfile="$rc" | sed -n '1p;/^TOTAL/p'
    fi
    "$coverage_python" -m coverage json --rcfile="$rc" -q -o coverage.json
  )
}

coverage_bar() {
  "$coverage_python" "$coverage_tools/coverage_bar.py" \
    "$coverage_root/coverage.json" --bar "$1"
}
