#!/usr/bin/env bash
# Records tests/goldens/mirrored_batch_norm.json: batch norm's moving
# statistics, evaluation and predictions after training under a
# MirroredStrategy on the REAL Estimator (TF 2.15.1 + tensorflow-estimator
# 2.15.0), which tests/test_mirrored_batch_norm.py compares this package
# against.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${GOLDEN_VENV:-$HOME/.cache/estimator-compat/tf215-venv}"
PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=2 "$VENV/bin/python" tests/mirrored_batch_norm_cases.py \
  --side old --out tests/goldens/mirrored_batch_norm.json
