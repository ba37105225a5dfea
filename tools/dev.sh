#!/usr/bin/env bash
# The two README commands:
#   tools/dev.sh run [FLAGS...]   set up .venv, then train + evaluate the demo
#                                 (or any model: python -m estimator_compat.train --helpfull)
#   tools/dev.sh test             set up .venv, then run every test once:
#                                 ruff and mypy, pytest runs the slow part
#                                 (multi-process and replay-heavy files; the
#                                 TF 2.15 venv of tools/tf215_venv.sh is
#                                 created first for the differential sample),
#                                 mkdocs build --strict builds the docs site,
#                                 the oldest supported TensorFlow's subset
#                                 (tools/tf_matrix.sh --ci 2.16), then
#                                 bazel test //... runs the rest; pytest's
#                                 part and Bazel's run under branch coverage
#                                 and fail when a public module is under 85%.
#                                 `tools/dev.sh test ARGS` runs only pytest ARGS.
#   tools/dev.sh test-python 3.10 on demand, not in CI: another Python with
#                                 TensorFlow 2.21 in its own cached venv
#                                 (tools/tf_matrix.sh --python): the test
#                                 files that touch what differs between
#                                 Pythons, then the matrix's quick subset
#                                 (docs/tensorflow_versions.md).
# Setup is idempotent: a second call only re-installs when setup.py or the
# ESTIMATOR_COMPAT_AUTO .pth changed.
set -euo pipefail
cd "$(dirname "$0")/.."
# test-python's files: the launcher, the ESTIMATOR_COMPAT_AUTO .pth and the
# IPython extension (runpy, sys.flags, tracebacks, site; the wheel), install()
# and the version check, and the front end most programs go through.
PYTHON_FILES=(tests/test_zero_edits.py tests/test_install.py
  tests/test_tf_versions.py tests/test_spec.py tests/test_run_config.py
  tests/test_estimator_front.py)

setup() {
  local py
  py=$(command -v python3.11 || command -v python3)
  if [ ! -x .venv/bin/python ]; then
    "$py" -m venv .venv
  fi
  local stamp=.venv/.estimator_compat_installed
  local want
  # The .pth is copied into site-packages at install: a change to it needs a
  # reinstall as much as a change to setup.py does.
  want=$(cat setup.py estimator_compat/estimator_compat_auto.pth | sha1sum \
    | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e ".[test]"
    echo "$want" > "$stamp"
  fi
}

ensure_bazel() {
  if command -v bazel >/dev/null && [ -d /usr/src/bazel-bootstrap/mock_repos ]; then
    return
  fi
  # Debian's offline-capable Bazel 4.2.3 and the mock repos .bazelrc points at.
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q bazel-bootstrap bazel-bootstrap-source >/dev/null
  else
    sudo apt-get update -q >/dev/null
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q bazel-bootstrap bazel-bootstrap-source >/dev/null
  fi
}

export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
cmd="${1:-}"
shift || true
case "$cmd" in
  run)
    setup
    exec .venv/bin/python -m estimator_compat.train "$@"
    ;;
  test)
    setup
    # The real Estimator (TF 2.15) for the differential sample test.
    ESTIMATOR_COMPAT_OLD_PYTHON=$(tools/tf215_venv.sh)
    export ESTIMATOR_COMPAT_OLD_PYTHON
    if [ "$#" -eq 0 ]; then
      # The oldest supported release's venv (TF 2.16, for its subset below):
      # where it is not cached, it is made in the background while pytest
      # runs (about 4 minutes of downloads and unpacking, under a minute of
      # CPU), so a fresh machine runs the subset too.
      matrix_216="${ESTIMATOR_COMPAT_TF_MATRIX:-$HOME/.cache/estimator-compat/tf-matrix}/2.16"
      venv_216_log=$(mktemp)
      venv_216_pid=
      if [ ! -x "$matrix_216/bin/python" ]; then
        nice -n 10 tools/tf_matrix.sh --venv 2.16 > "$venv_216_log" 2>&1 &
        venv_216_pid=$!
      fi
      # Code checks first (seconds): pyflakes/bugbear, and calls with a
      # missing or unknown argument (tests/test_code_checks.py plants each).
      .venv/bin/python -m ruff check --config tools/ruff.toml .
      .venv/bin/python -m mypy --config-file tools/mypy.ini estimator_compat \
        migration
      # The whole suite, each test once: pytest runs the slow part (files
      # BUILD tags slow, functions marked slow), Bazel the rest. Two
      # workers, a file each at a time (pytest-xdist): the slow tests spend
      # much of their time waiting on subprocesses and servers, so two run
      # in about the time of one and a half. Both parts run under branch
      # coverage (tools/coverage_lib.sh; about a quarter more CPU), judged
      # after Bazel's part: no public module under 85% (docs/decisions.md,
      # "CI measures branch coverage of its own run").
      # shellcheck source=tools/coverage_lib.sh
      source tools/coverage_lib.sh
      trap coverage_stop EXIT
      coverage_start "$PWD"
      env "${COVERAGE_ENV[@]}" ESTIMATOR_COMPAT_BAZEL_PART=skip \
        .venv/bin/python -m pytest -q -n 2 --dist loadfile --durations=30
    else
      .venv/bin/python -m pytest -q "$@"
      exit 0
    fi
    # The documentation site: broken links, pages missing from the
    # navigation, unparsable docstrings (seconds; no network). Not -q: it
    # hides the warnings that --strict turns into a failure.
    site_dir=$(mktemp -d)
    NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict \
      --site-dir "$site_dir"
    rm -rf "$site_dir"
    # The oldest supported release, TensorFlow 2.16, in its own cached venv
    # (~/.cache/estimator-compat/tf-matrix/2.16, made above while pytest
    # ran): CI's subset of the matrix (docs/tensorflow_versions.md says what
    # it runs and why). Where the venv could not be made (no package index),
    # the step says so instead of running.
    # What did not run is said again at the very end, under Bazel's output,
    # so a green run cannot be taken for one that ran everything.
    not_run=()
    trap 'coverage_stop; for line in "${not_run[@]}"; do echo "NOT RUN in this run: $line" >&2; done' EXIT
    if [ -n "$venv_216_pid" ] && ! wait "$venv_216_pid"; then
      echo "Making the TF 2.16 venv failed:" >&2
      tail -n 20 "$venv_216_log" >&2
    fi
    rm -f "$venv_216_log"
    if [ -x "$matrix_216/bin/python" ]; then
      table=$(tools/tf_matrix.sh --ci 2.16) || { echo "$table"; exit 1; }
      echo "$table"
      if grep -q "| not run |" <<< "$table"; then
        not_run+=("the conformance sample on TF 2.16 (no tensorflow/estimator\
 v2.15.0 checkout: set ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT; see\
 docs/conformance.md, \"Where the test files come from\")")
      fi
    else
      echo "TF 2.16 subset NOT RUN: its venv could not be made (above);" \
        "make it with tools/tf_matrix.sh --venv 2.16, then rerun." >&2
      not_run+=("the TF 2.16 subset (goldens and conformance sample; its\
 venv could not be made: tools/tf_matrix.sh --venv 2.16)")
    fi
    ensure_bazel
    # py_test runs the python3 on PATH: the project's virtualenv. Bazel runs
    # every test file BUILD does not tag slow, without the functions marked
    # slow (pytest ran those above), which also checks every BUILD target.
    PATH="$PWD/.venv/bin:$PATH" bazel test //... --test_tag_filters=-slow \
      --test_env=PYTEST_ADDOPTS="-m 'not slow'" "${COVERAGE_BAZEL_FLAGS[@]}"
    # Branch coverage of both parts: the total, then the bar (exit 1 and the
    # list when a public module is under 85%; coverage.json has the figures).
    coverage_report total
    coverage_bar 85
    ;;
  test-python)
    # On demand only: CI's 45 minutes have no room for another venv and run.
    version=${1:?usage: tools/dev.sh test-python X.Y}
    python=$(tools/tf_matrix.sh --python "$version" --venv 2.21)
    status=0
    PYTHONPATH="$PWD" "$python" -m pytest -q -p no:cacheprovider \
      "${PYTHON_FILES[@]}" || status=1
    tools/tf_matrix.sh --python "$version" --quick 2.21 || status=1
    exit $status
    ;;
  *)
    echo "usage: tools/dev.sh run [binary flags...] | tools/dev.sh test [pytest args...]" \
      "| tools/dev.sh test-python X.Y" >&2
    exit 2
    ;;
esac
