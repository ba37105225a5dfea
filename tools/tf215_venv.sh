#!/usr/bin/env bash
# Creates (once) and prints the path of a Python with the REAL Estimator:
# TensorFlow 2.15.1 + tensorflow-estimator 2.15.0 (+ numpy<2, pandas), the
# reference the differential sweep and the goldens compare against.
#   tools/tf215_venv.sh            -> prints .../tf215-venv/bin/python
# Cached at ~/.cache/estimator-compat/tf215-venv (override with
# ESTIMATOR_COMPAT_TF215_VENV). TensorFlow 2.15 needs Python <= 3.11.
set -euo pipefail
venv="${ESTIMATOR_COMPAT_TF215_VENV:-$HOME/.cache/estimator-compat/tf215-venv}"
ready() {
  [ -x "$venv/bin/python" ] && TF_CPP_MIN_LOG_LEVEL=3 "$venv/bin/python" -c "
import pandas, tensorflow_estimator, tensorflow as tf
assert tf.__version__ == '2.15.1', tf.__version__" >/dev/null 2>&1
}
if ! ready; then
  py=$(command -v python3.11 || command -v python3)
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
  "$venv/bin/python" -m pip install -q tensorflow==2.15.1 \
    tensorflow-estimator==2.15.0 "numpy<2" pandas >&2
  ready || { echo "tools/tf215_venv.sh: $venv is not usable" >&2; exit 1; }
fi
echo "$venv/bin/python"
