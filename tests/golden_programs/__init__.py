"""Legacy Estimator programs whose results on the real Estimator are goldens.

Each module is plain legacy code: it uses `tf.estimator` and
`tf.compat.v1` only, so it runs on TF 2.15 + tensorflow-estimator and, after
`estimator_compat.install()`, on TF 2.21. A program is a custom model_fn
(`model_fn`, `CONFIG`, `PARAMS`) or defines `build_estimator(tf, model_dir)`;
see migration/recorders/golden_recorder.py.
"""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_GOLDENS = os.path.join(os.path.dirname(_HERE), "goldens")
# The programs with a recorded golden in tests/goldens/ (one_shot has only a
# migration golden), the first five first, in the order they were added.
_FIRST = ("mlp", "feature_columns", "batch_norm", "hooks", "seed")
_FOUND = sorted(
    name[:-3] for name in os.listdir(_HERE)
    if name.endswith(".py") and not name.startswith("_")
    and os.path.isdir(os.path.join(_GOLDENS, name[:-3])))
NAMES = tuple(_FIRST) + tuple(n for n in _FOUND if n not in _FIRST)
