"""TensorFlow Estimator 2.8's gradient boosted trees (not exposed yet: TF
2.21 has no kernels for the BoostedTrees ops; see docs/boosted-trees.md).

Modules: features (feature columns to bucket ids), tree_proto (the ensemble
message), growers (the per-layer training ops), model (the model_fn),
heads, estimators (the public classes).
"""

from estimator_compat.canned.boosted_trees.estimators import (
    BoostedTreesClassifier, BoostedTreesRegressor)

__all__ = ["BoostedTreesClassifier", "BoostedTreesRegressor"]
