#!/usr/bin/env bash
# Records the migration goldens (tests/migration_goldens/<name>/) on the REAL
# Estimator (TensorFlow 2.15.1 + tensorflow-estimator 2.15.0) with
# `python -m migration record`, reading each program's flags from
# tests/migration_goldens/<name>.flags. Run by hand when a program or the
# recording format changes; CI only reads the committed goldens.
#
#   tools/record_migration_goldens.sh             # all programs
#   tools/record_migration_goldens.sh mlp seed    # some
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${GOLDEN_VENV:-$HOME/.cache/estimator-compat/tf215-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3.11 -m venv "$VENV"
  "$VENV/bin/pip" install -q "tensorflow==2.15.1" "tensorflow-estimator==2.15.0" "numpy<2"
fi
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  names=($(cd tests/migration_goldens && ls *.flags | sed 's/\.flags$//'))
fi
for n in "${names[@]}"; do
  rm -rf "tests/migration_goldens/$n"
  PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=2 "$VENV/bin/python" -m migration record \
    --flagfile="tests/migration_goldens/$n.flags" --out "tests/migration_goldens/$n"
done
