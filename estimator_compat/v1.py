"""`tf.compat.v1.estimator`: the TF1 API namespace of estimator_compat.

TensorFlow 2.15 had two Estimator namespaces. Most names were the same
object in both; the canned estimators were not (`tf.compat.v1.estimator.
DNNClassifier` takes `tf.compat.v1.train` optimizers and partitioners,
`tf.estimator.DNNClassifier` Keras optimizers). This module holds the names
whose TF1 version differs (`V1_PUBLIC`) and answers every other name from
the package itself, so `install()` can point `tf.compat.v1.estimator` here
and `tf.estimator` at the package.
"""

import importlib
from typing import Any, Dict, List

import estimator_compat

# Public name -> the module defining its TF1 version, for names whose TF1
# version differs from the `tf.estimator` one. The module's attribute of the
# same name is used unless the entry is "module:attribute"; an entry
# "module:" is the module itself (a namespace such as `experimental`).
_DLC = "estimator_compat.canned.dnn_linear_combined"
V1_PUBLIC: Dict[str, str] = {
    "DNNClassifier": "estimator_compat.canned.dnn",
    "DNNEstimator": "estimator_compat.canned.dnn",
    "DNNRegressor": "estimator_compat.canned.dnn",
    "DNNLinearCombinedClassifier": _DLC,
    "DNNLinearCombinedEstimator": _DLC,
    "DNNLinearCombinedRegressor": _DLC,
}
V1_PUBLIC.update({
    "classifier_parse_example_spec":
        "estimator_compat.head.parse_spec:classifier_parse_example_spec_v1",
    "experimental": "estimator_compat.api.experimental_v1:",
    "regressor_parse_example_spec":
        "estimator_compat.head.parse_spec:regressor_parse_example_spec_v1",
})
# The TF1 Linear and Baseline families.
V1_PUBLIC.update({
    "BaselineClassifier": "estimator_compat.canned.baseline",
    "BaselineEstimator": "estimator_compat.canned.baseline",
    "BaselineRegressor": "estimator_compat.canned.baseline",
    "LinearClassifier": "estimator_compat.canned.linear",
    "LinearEstimator": "estimator_compat.canned.linear",
    "LinearRegressor": "estimator_compat.canned.linear",
})


def __getattr__(name: str) -> Any:
  """Loads a TF1 name the first time it is used."""
  spec = V1_PUBLIC.get(name)
  if spec is None:
    try:
      value = getattr(estimator_compat, name)
    except AttributeError:
      raise AttributeError(
          f"module 'tf.compat.v1.estimator' has no attribute {name!r}"
      ) from None
  else:
    module_name, colon, attribute = spec.partition(":")
    module = importlib.import_module(module_name)
    value = module if colon and not attribute else getattr(
        module, attribute or name)
  globals()[name] = value
  return value


def __dir__() -> List[str]:
  return sorted(set(globals()) | set(V1_PUBLIC) | set(dir(estimator_compat)))
