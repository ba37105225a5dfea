#!/usr/bin/env bash
# Runs google-research/bert's run_classifier (the bert-tensorflow 1.0.4
# package from the package index, `-m bert.run_classifier`) with
# --use_tpu=False on the REAL TPUEstimator (TF 2.15.1 +
# tensorflow-estimator 2.15.0) and writes what it left in its output_dir to
# tests/legacy_programs/goldens/bert_run_classifier.json. The arguments are
# tests/test_bert_run_classifier.py's ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${GOLDEN_VENV:-$HOME/.cache/estimator-compat/tf215-venv}"
"$VENV/bin/python" -c "import bert.run_classifier" 2>/dev/null ||
  "$VENV/bin/python" -m pip install -q --no-deps bert-tensorflow==1.0.4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$VENV/bin/python" tests/legacy_programs/bert_data.py "$work"
args=$(PYTHONPATH=. "$VENV/bin/python" -c \
  'from tests.legacy_programs.bert_data import run_classifier_args; print(" ".join(run_classifier_args("'"$work"'")))')
TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" tests/legacy_programs/tf1_shim.py \
  -m bert.run_classifier $args --output_dir="$work/out" \
  > "$work/out.txt" 2> "$work/err.txt"
PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" -m tests.legacy_programs.describe \
  "$work/out" "$work/out.txt" > tests/legacy_programs/goldens/bert_run_classifier.json
echo "recorded bert_run_classifier"
