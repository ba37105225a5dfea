#!/usr/bin/env bash
# Records tests/goldens/head_reference.json: the heads' results and errors on
# fixed inputs on the REAL Estimator (TF 2.15.1 + tensorflow-estimator
# 2.15.0), which tests/test_head_reference.py compares this package against.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${GOLDEN_VENV:-$HOME/.cache/estimator-compat/tf215-venv}"
PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=2 "$VENV/bin/python" -m tests.head_reference_cases \
  --out tests/goldens/head_reference.json
