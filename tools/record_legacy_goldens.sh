#!/usr/bin/env bash
# Runs tests/legacy_programs on the REAL Estimator (TF 2.15.1 +
# tensorflow-estimator 2.15.0, its own virtualenv) and writes what each left
# behind to tests/legacy_programs/goldens/<program>.json. Run by hand when a
# program changes; CI only reads the committed files.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${GOLDEN_VENV:-$HOME/.cache/estimator-compat/tf215-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3.11 -m venv "$VENV"
  "$VENV/bin/pip" install -q "tensorflow==2.15.1" "tensorflow-estimator==2.15.0" "numpy<2" pandas
fi
mkdir -p tests/legacy_programs/goldens
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# program name, then its command-line arguments (model_dir is added).
while read -r name args; do
  [ -z "$name" ] && continue
  TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" "tests/legacy_programs/$name.py" \
    $args --model_dir="$work/$name" > "$work/$name.out" 2> "$work/$name.err"
  PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" -m tests.legacy_programs.describe \
    "$work/$name" "$work/$name.out" > "tests/legacy_programs/goldens/$name.json"
  echo "recorded $name"
done < tests/legacy_programs/PROGRAMS
