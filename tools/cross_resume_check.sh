#!/usr/bin/env bash
# Shows that one model_dir moves both ways between the real Estimator
# (TF 2.15.1, its own virtualenv as in record_goldens.sh) and estimator_compat
# (TF 2.21, .venv): here 20 steps -> real Estimator 20 more -> here 20 more.
# Run by hand (needs the TF 2.15 virtualenv); prints the step after each leg.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${GOLDEN_VENV:-$HOME/.cache/estimator-compat/tf215-venv}"
program="${1:-mlp}"
dir=$(mktemp -d)
run() { PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=3 "$1" -m migration.recorders.golden_recorder --program "$program" --train_in "$dir" --steps 20 2>/dev/null | tail -1; }
echo "estimator_compat: $(run .venv/bin/python)"
echo "real Estimator:   $(run "$VENV/bin/python")"
echo "estimator_compat: $(run .venv/bin/python)"
ls "$dir"
