#!/usr/bin/env bash
# Records the BoostedTrees goldens (tests/golden_programs/boosted_trees_*.py)
# on tensorflow-estimator 2.8.0, the last release with the BoostedTrees
# estimators, running on TensorFlow 2.8.4, whose wheels still have the
# BoostedTrees kernels (the wheels of TF 2.12 to 2.21 register none: see
# docs/boosted-trees.md). TF 2.8 has wheels up to Python 3.10, so the venv
# is made with a python3.10 (PYTHON310, else pyenv's, else python3.10 on
# PATH). Run by hand when a program changes; tests only read the committed
# tests/boosted_trees_goldens/.
#
#   tools/record_boosted_trees_goldens.sh          # every boosted_trees_* program,
#                                                  # the SavedModel exports and the
#                                                  # tutorial program
#   tools/record_boosted_trees_goldens.sh boosted_trees_regressor
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${BT_GOLDEN_VENV:-$HOME/.cache/estimator-compat/tf28-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  PY="${PYTHON310:-}"
  if [ -z "$PY" ] && command -v pyenv > /dev/null; then
    PY="$(pyenv root)/versions/$(pyenv versions --bare | grep '^3\.10' | tail -1)/bin/python"
  fi
  PY="${PY:-python3.10}"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q "tensorflow==2.8.4" "tensorflow-estimator==2.8.0" \
    "keras==2.8.0" "numpy<1.24" "protobuf<3.20" "pandas<2"
fi
programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
  programs=($(cd tests/golden_programs && ls boosted_trees_*.py | sed 's/\.py$//'))
fi
for p in "${programs[@]}"; do
  PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=2 "$VENV/bin/python" -m migration.recorders.golden_recorder \
    --program "$p" --out "tests/boosted_trees_goldens/$p"
done
if [ $# -eq 0 ]; then
  # 2.8's SavedModel exports (tests/boosted_trees_goldens/export/).
  PYTHONPATH=. TF_CPP_MIN_LOG_LEVEL=2 "$VENV/bin/python" tools/record_boosted_trees_export.py
  # The TF docs' boosted-trees tutorial program, run several times
  # (tests/legacy_programs/goldens/boosted_trees_tutorial.json).
  TF_CPP_MIN_LOG_LEVEL=2 "$VENV/bin/python" tools/record_boosted_trees_tutorial.py
fi
