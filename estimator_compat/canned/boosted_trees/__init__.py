"""TensorFlow Estimator 2.8's gradient boosted trees (docs/boosted-trees.md).

Modules: features (feature columns to bucket ids), tree_proto (the ensemble
message), kernels (NumPy BoostedTrees kernels; TF 2.21 has none),
quantiles (the quantile sketch), qr_solve (the multi-dimensional leaves'
solve), graph_kernels (them as graph ops),
in_memory (train_in_memory's caches), growers (the per-layer training ops),
model (the model_fn), inference and explanations (reading a trained
ensemble), heads, estimators (the public classes).
"""

from estimator_compat.canned.boosted_trees.estimators import (
    BoostedTreesClassifier, BoostedTreesEstimator, BoostedTreesRegressor)

__all__ = ["BoostedTreesClassifier", "BoostedTreesEstimator",
           "BoostedTreesRegressor"]
