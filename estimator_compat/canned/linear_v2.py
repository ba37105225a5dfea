"""The `tf.estimator` (v2) Linear estimators under their public names.

`tf.estimator.LinearClassifier` is TensorFlow 2.15's `LinearClassifierV2`
(canned/linear.py holds both families under the real module's names); the
package's `_PUBLIC` table maps a public name to a module holding it under
that name, which is this one.
"""

from estimator_compat.canned import linear

LinearClassifier = linear.LinearClassifierV2
LinearRegressor = linear.LinearRegressorV2
LinearEstimator = linear.LinearEstimatorV2
LinearModel = linear.LinearModel
