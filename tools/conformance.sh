#!/bin/bash
# Runs the real Estimator's own tests (tensorflow/estimator at v2.15.0) against
# estimator_compat on the default engine and on each engine forced, and prints
# how many of the counted tests pass.
#
#   tools/conformance.sh PATH_TO_TENSORFLOW_ESTIMATOR_CHECKOUT [--engine all|default|graph|function]
#
# Other options: see `tools/conformance.sh X --help` (tools/conformance.py).
# Python: $PYTHON, else .venv/bin/python in the repository, else python3.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
exec "$python" "$root/tools/conformance.py" "$@"
