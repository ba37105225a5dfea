#!/usr/bin/env bash
# Records the golden results of tests/golden_programs on the REAL Estimator
# (TensorFlow 2.15.1 + tensorflow-estimator 2.15.0) in its own virtualenv.
# Run by hand when a golden program changes; CI only reads the committed
# tests/goldens/. Needs python3.11 and network access to the package index.
#
#   tools/record_goldens.sh            # all programs with a golden already
#   tools/record_goldens.sh new_one    # a new program (tests/golden_programs/new_one.py)
#   tools/record_goldens.sh mlp hooks  # some
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${GOLDEN_VENV:-$HOME/.cache/estimator-compat/tf215-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3.11 -m venv "$VENV"
  "$VENV/bin/pip" install -q "tensorflow==2.15.1" "tensorflow-estimator==2.15.0" "numpy<2"
fi
programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
  programs=($(PYTHONPATH=. "$VENV/bin/python" -c 'from tests.golden_programs import NAMES; print(" ".join(NAMES))'))
fi
for p in "${programs[@]}"; do
  PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=2 "$VENV/bin/python" -m migration.recorders.golden_recorder \
    --program "$p" --out "tests/goldens/$p"
done
