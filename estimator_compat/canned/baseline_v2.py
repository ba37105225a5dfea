"""The `tf.estimator` (v2) Baseline estimators under their public names.

`tf.estimator.BaselineClassifier` is TensorFlow 2.15's
`BaselineClassifierV2` (canned/baseline.py holds both families under the
real module's names); the package's `_PUBLIC` table maps a public name to a
module holding it under that name, which is this one.
"""

from estimator_compat.canned import baseline

BaselineClassifier = baseline.BaselineClassifierV2
BaselineRegressor = baseline.BaselineRegressorV2
BaselineEstimator = baseline.BaselineEstimatorV2
