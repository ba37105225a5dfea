"""Legacy Estimator programs whose results on the real Estimator are goldens.

Each module is plain legacy code: it uses `tf.estimator` and
`tf.compat.v1` only, so it runs on TF 2.15 + tensorflow-estimator and, after
`estimator_compat.install()`, on TF 2.21.
"""

NAMES = ("mlp", "feature_columns", "batch_norm", "hooks", "seed")
