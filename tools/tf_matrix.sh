#!/usr/bin/env bash
# The supported TensorFlow range: one venv per release, the fast subset in each.
#   tools/tf_matrix.sh                  every release 2.16..2.21, one at a time:
#                                       the goldens (both engines) and the
#                                       conformance sample (default engine);
#                                       prints the README's table rows
#   tools/tf_matrix.sh 2.16 2.21        only these releases
#   tools/tf_matrix.sh --quick 2.18     a quicker subset: 6 goldens on both
#                                       engines, 3 conformance files
#   tools/tf_matrix.sh --ci 2.16        CI's subset: 4 goldens on both
#                                       engines, 2 conformance files
#                                       (docs/tensorflow_versions.md)
#   tools/tf_matrix.sh --venv 2.16      create (once) and print that Python
#   tools/tf_matrix.sh --checkout       the Estimator's test files: print the
#                                       checkout (cloned once), or nothing and
#                                       why; fails on a wrong
#                                       $ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT
#   tools/tf_matrix.sh --python 3.10 --quick 2.21
#                                       the same on another Python (first
#                                       option; combines with the others):
#                                       python3.10 on PATH, else pyenv's
#                                       newest 3.10.x
# Prints the table rows of docs/tensorflow_versions.md ("The matrix").
# Venvs: ~/.cache/estimator-compat/tf-matrix/<release> (Python 3.11, CI's),
# <release>-py<X.Y> for --python X.Y (override the folder
# with ESTIMATOR_COMPAT_TF_MATRIX), each `pip install -e .[test]
# tensorflow==<release>.* tf-keras==<release>.*` (+ what tf_versions says the
# release needs beyond its metadata); re-installed when setup.py
# or the checkout changes. Per-run logs and results: <folder>/results/<venv>.
# The conformance sample runs the Estimator's own test files from a
# tensorflow/estimator checkout at v2.15.0: $ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT
# (used as it is), else <folder>/estimator-v2.15.0 (cloned there when absent;
# where github is unreachable the rows say "not run" and stderr says how to
# provide one: docs/conformance.md, "Where the test files come from").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
base="${ESTIMATOR_COMPAT_TF_MATRIX:-$HOME/.cache/estimator-compat/tf-matrix}"
RELEASES=(2.16 2.17 2.18 2.19 2.20 2.21)
# CI's Python; --python picks another.
DEFAULT_PYTHON=3.11
python_version=$DEFAULT_PYTHON
# The conformance sample (docs/tensorflow_versions.md says why): the
# Estimator's core, export, hooks, TPU-config and two head files, 357 counted
# tests. Left out: the canned estimators' files (~20 s a test; the goldens
# replay every canned estimator) and keras_test.py (~15 s a test; the keras
# goldens replay model_to_estimator).
SAMPLE_FILES=(estimator_test.py model_fn_test.py run_config_test.py
  training_test.py hooks/hooks_test.py export/export_test.py
  early_stopping_test.py tpu/tpu_config_test.py
  head/regression_head_test.py head/multi_head_test.py)
# The quick subset (docs/tensorflow_versions.md): goldens that reach each
# release-dependent area on both engines (tf.compat.v1 layers, tf-keras's
# model_to_estimator, feature columns and the Keras-built canned DNN, the
# canned Linear's FTRL, lookup tables, hooks; each exports a SavedModel),
# and the conformance files of EstimatorSpec, export and the hooks.
QUICK_GOLDENS="mlp or keras_model or dnn_classifier_v2 or linear_classifier_v2 or lookup_tables or hooks"
QUICK_FILES=(model_fn_test.py export/export_test.py hooks/hooks_test.py)
# CI's subset of it, for CI's time: tf.compat.v1 layers, model_to_estimator,
# the Keras-built canned DNN with feature columns, lookup tables (every one
# runs hooks and exports), and EstimatorSpec and export's own tests.
CI_GOLDENS="mlp or keras_model or dnn_classifier_v2 or lookup_tables"
CI_FILES=(model_fn_test.py export/export_test.py)

find_python() {  # X.Y -> prints an interpreter of that version, or fails.
  local version=$1 candidate
  # pyenv's shims exist for every installed version but run only the
  # selected ones: each candidate must run and report the version.
  for candidate in "python$version" \
      $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$version".*/bin/python \
        2>/dev/null | sort -V -r) "/usr/bin/python$version"; do
    if [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' \
        2>/dev/null)" = "$version" ]; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "tf_matrix.sh: no Python $version found (python$version on PATH," \
    "pyenv's versions/$version.*, /usr/bin/python$version)" >&2
  return 1
}

venv_dir() {  # RELEASE -> the venv's folder for the chosen Python.
  if [ "$python_version" = "$DEFAULT_PYTHON" ]; then
    echo "$base/$1"
  else
    echo "$base/$1-py$python_version"
  fi
}

venv_python() {  # RELEASE -> prints the venv's python, creating it once.
  local release=$1 venv
  venv=$(venv_dir "$release")
  local want
  want="$(sha1sum setup.py | cut -d' ' -f1) $root"
  if [ ! -f "$venv/.installed" ] || [ "$(cat "$venv/.installed")" != "$want" ]; then
    local py
    if [ "$python_version" = "$DEFAULT_PYTHON" ]; then
      py=$(command -v python3.11 || command -v python3)
    else
      py=$(find_python "$python_version")
    fi
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install -q --upgrade pip >&2
    # What the release needs beyond its metadata (protobuf<7 for 2.20),
    # from estimator_compat/api/tf_versions.py, which imports no TensorFlow.
    local extra
    extra=$("$venv/bin/python" -c "
import importlib.util as u  # the file alone: the package needs tf-keras
spec = u.spec_from_file_location('tf_versions', 'estimator_compat/api/tf_versions.py')
module = u.module_from_spec(spec); spec.loader.exec_module(module)
print(module.extra_requirements('$release'))")
    "$venv/bin/python" -m pip install -q -e ".[test]" "tensorflow==$release.*" \
      "tf-keras==$release.*" $extra >&2
    echo "$want" > "$venv/.installed"
  fi
  echo "$venv/bin/python"
}

# The Estimator's own test files come from github only: the
# tensorflow-estimator wheels on the package index ship none of its
# *_test.py (only canned/*testing_utils.py), and it has no sdist.
ESTIMATOR_TAG=v2.15.0
ESTIMATOR_TEST_DIR=tensorflow_estimator/python/estimator

estimator_checkout() {  # prints the checkout, or nothing and why on stderr
  local checkout
  if [ -n "${ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT:-}" ]; then
    # The user's folder: used as it is, never cloned into nor removed.
    checkout=$ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT
    if [ ! -f "$checkout/$ESTIMATOR_TEST_DIR/model_fn_test.py" ]; then
      echo "tf_matrix.sh: ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT=$checkout is" \
        "not a tensorflow/estimator $ESTIMATOR_TAG checkout (no" \
        "$ESTIMATOR_TEST_DIR/model_fn_test.py). Fix: point it at one made" \
        "with git clone --depth 1 --branch $ESTIMATOR_TAG" \
        "https://github.com/tensorflow/estimator DIR, or unset it." >&2
      return 1
    fi
    echo "$checkout"
    return 0
  fi
  checkout="$base/estimator-$ESTIMATOR_TAG"
  if [ ! -f "$checkout/$ESTIMATOR_TEST_DIR/model_fn_test.py" ]; then
    # Cloned beside it and moved into place whole: an interrupted clone
    # leaves no half checkout behind to be taken for one.
    local partial="$checkout.partial" error
    rm -rf "$partial"
    mkdir -p "$base"
    if ! error=$(GIT_TERMINAL_PROMPT=0 timeout 300 git clone -q --depth 1 \
        --branch "$ESTIMATOR_TAG" https://github.com/tensorflow/estimator \
        "$partial" 2>&1); then
      rm -rf "$partial"
      echo "tf_matrix.sh: conformance sample NOT RUN: it runs" \
        "tensorflow/estimator $ESTIMATOR_TAG's own test files" \
        "($ESTIMATOR_TEST_DIR/*_test.py), which only github has (the" \
        "tensorflow-estimator wheel on the package index ships none of" \
        "them and there is no sdist), and the clone failed:" \
        "$(echo "${error:-timed out after 300 s}" | head -n 1). Fix: on a" \
        "machine that reaches github, git clone --depth 1 --branch" \
        "$ESTIMATOR_TAG https://github.com/tensorflow/estimator DIR, copy" \
        "DIR here, and set ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT=DIR (or put" \
        "it at $checkout, where it stays cached)." >&2
      return 0
    fi
    rm -rf "$checkout"
    mv "$partial" "$checkout"
  fi
  echo "$checkout"
}

run_release() {  # RELEASE SUBSET(all|quick|ci) -> one table row on stdout.
  local release=$1 subset=$2 python out
  python=$(venv_python "$release")
  out="$base/results/$(basename "$(venv_dir "$release")")"
  rm -rf "$out" && mkdir -p "$out"
  local versions
  versions=$("$python" -c "import importlib.metadata as m, platform; print(
    platform.python_version(), m.version('tensorflow'), m.version('tf-keras'))")
  local goldens_args=(tests/test_goldens.py) files=("${SAMPLE_FILES[@]}")
  if [ "$subset" = quick ]; then
    goldens_args+=(-k "$QUICK_GOLDENS")
    files=("${QUICK_FILES[@]}")
  elif [ "$subset" = ci ]; then
    goldens_args+=(-k "$CI_GOLDENS")
    files=("${CI_FILES[@]}")
  fi
  echo "== TF $release (Python, TF, tf-keras: $versions): goldens" >&2
  PYTHONPATH="$root" TF_CPP_MIN_LOG_LEVEL=2 "$python" -m pytest -q \
    -p no:cacheprovider --junitxml="$out/goldens.xml" "${goldens_args[@]}" \
    > "$out/goldens.log" 2>&1 || true
  tail -n 1 "$out/goldens.log" >&2
  if [ -z "$checkout" ]; then
    # estimator_checkout said why and how to provide one: the row says
    # "not run", and the goldens alone decide it.
    echo "== TF $release: conformance sample NOT RUN (no tensorflow/estimator" \
      "$ESTIMATOR_TAG checkout; see above)" >&2
    files=()
  else
    echo "== TF $release: conformance sample (${files[*]})" >&2
    "$python" tools/conformance.py "$checkout" --engine default \
      --python "$python" --out "$out/conformance" --files "${files[@]}" \
      > "$out/conformance.log" 2>&1 || true
    tail -n 1 "$out/conformance.log" | grep -v "Per-test" >&2 || true
  fi
  "$python" - "$release" "$versions" "$subset" "$out" "${files[@]}" <<'EOF'
import datetime, json, os, sys
import xml.etree.ElementTree as ET
sys.path.insert(0, "tools")
import conformance
release, versions, subset, out = sys.argv[1:5]
files = sys.argv[5:]
suite = ET.parse(os.path.join(out, "goldens.xml")).getroot()
suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
total = int(suite.get("tests"))
bad = sum(int(suite.get(k)) for k in ("failures", "errors", "skipped"))
counted = conformance.counted_tests(files)
path = os.path.join(out, "conformance", "default.json")
results = json.load(open(path)) if os.path.exists(path) else {}
passed = sum(results.get(t, {}).get("outcome") == "passed" for t in counted)
python_version, tf_version, keras_version = versions.split()
conformance_cell = f"{passed}/{len(counted)}" if files else "not run"
print(f"| {python_version} | {tf_version} | {keras_version} | {subset} "
      f"| {total - bad}/{total} "
      f"| {conformance_cell} | {datetime.date.today().isoformat()} |")
ok = total > 0 and bad == 0 and passed == len(counted)
sys.exit(0 if ok else 1)
EOF
}

subset=all
if [ "${1:-}" = --python ]; then
  python_version=$2
  shift 2
  find_python "$python_version" > /dev/null
fi
case "${1:-}" in
  --venv) venv_python "$2"; exit 0 ;;
  --checkout) estimator_checkout; exit 0 ;;
  --quick) subset=quick; shift ;;
  --ci) subset=ci; shift ;;
esac
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=("${RELEASES[@]}")
# Once for every release, before any venv: a wrong
# ESTIMATOR_COMPAT_ESTIMATOR_CHECKOUT stops here.
checkout=$(estimator_checkout)
status=0
echo "| Python | TensorFlow | tf-keras | subset | goldens passed | conformance passed | date |"
echo "|---|---|---|---|---:|---:|---|"
for release in "${releases[@]}"; do
  run_release "$release" "$subset" || status=1
done
exit $status
