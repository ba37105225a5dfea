"""estimator_compat: legacy `tf.estimator` programs on modern TensorFlow.

Use it as `import estimator_compat as tf_estimator`, or call
`estimator_compat.install()` once so that `tf.estimator` resolves here.
Importing this package routes `tf.keras` to tf-keras (Keras 2), which legacy
model code needs; it must therefore be imported before anything reads
`tf.keras`.

The public names load on first use (PEP 562): importing the package does
not import TensorFlow, so `python -m estimator_compat.train --bad_flag`
answers at once and a program pays for TensorFlow only when it uses it.
"""

import importlib
from typing import Any, List

from estimator_compat.api import legacy_keras as _legacy_keras

_legacy_keras.ensure_legacy_keras()

__version__ = "0.1.0"

# Public name -> the module that defines it (a subpackage for itself), or
# "module:attribute" where the module's attribute of that name is another
# (canned estimators: `DNNClassifier` there is the tf.compat.v1 one).
_HOOKS = "estimator_compat.hooks"
_PUBLIC = {
    "BestExporter": "estimator_compat.export.exporters",
    "FinalExporter": "estimator_compat.export.exporters",
    "LatestExporter": "estimator_compat.export.exporters",
    "CheckpointSaverHook": _HOOKS,
    "CheckpointSaverListener": _HOOKS,
    "FeedFnHook": _HOOKS,
    "FinalOpsHook": _HOOKS,
    "GlobalStepWaiterHook": _HOOKS,
    "LoggingTensorHook": _HOOKS,
    "NanLossDuringTrainingError": _HOOKS,
    "NanTensorHook": _HOOKS,
    "ProfilerHook": _HOOKS,
    "SecondOrStepTimer": _HOOKS,
    "SessionRunArgs": _HOOKS,
    "SessionRunContext": _HOOKS,
    "SessionRunHook": _HOOKS,
    "SessionRunValues": _HOOKS,
    "StepCounterHook": _HOOKS,
    "StopAtStepHook": _HOOKS,
    "SummarySaverHook": _HOOKS,
    "Estimator": "estimator_compat.estimator",
    "EstimatorSpec": "estimator_compat.spec",
    "ModeKeys": "estimator_compat.mode_keys",
    "RunConfig": "estimator_compat.run_config",
    "EvalSpec": "estimator_compat.training",
    "Exporter": "estimator_compat.export.exporter",
    "TrainSpec": "estimator_compat.training",
    "train_and_evaluate": "estimator_compat.training",
    "VocabInfo": "estimator_compat.warm_starting",
    "WarmStartSettings": "estimator_compat.warm_starting",
    "BinaryClassHead": "estimator_compat.head",
    "Head": "estimator_compat.head",
    "LogisticRegressionHead": "estimator_compat.head",
    "MultiClassHead": "estimator_compat.head",
    "MultiHead": "estimator_compat.head",
    "MultiLabelHead": "estimator_compat.head",
    "PoissonRegressionHead": "estimator_compat.head",
    "RegressionHead": "estimator_compat.head",
    "DNNClassifier": "estimator_compat.canned.dnn:DNNClassifierV2",
    "DNNEstimator": "estimator_compat.canned.dnn:DNNEstimatorV2",
    "DNNRegressor": "estimator_compat.canned.dnn:DNNRegressorV2",
    "DNNLinearCombinedClassifier":
        "estimator_compat.canned.dnn_linear_combined:"
        "DNNLinearCombinedClassifierV2",
    "DNNLinearCombinedEstimator":
        "estimator_compat.canned.dnn_linear_combined:"
        "DNNLinearCombinedEstimatorV2",
    "DNNLinearCombinedRegressor":
        "estimator_compat.canned.dnn_linear_combined:"
        "DNNLinearCombinedRegressorV2",
    # tensorflow-estimator 2.8's (removed in 2.9), in both namespaces.
    "BoostedTreesClassifier": "estimator_compat.canned.boosted_trees",
    "BoostedTreesEstimator": "estimator_compat.canned.boosted_trees",
    "BoostedTreesRegressor": "estimator_compat.canned.boosted_trees",
    "BaselineClassifier": "estimator_compat.canned.baseline_v2",
    "BaselineEstimator": "estimator_compat.canned.baseline_v2",
    "BaselineRegressor": "estimator_compat.canned.baseline_v2",
    "LinearClassifier": "estimator_compat.canned.linear_v2",
    "LinearEstimator": "estimator_compat.canned.linear_v2",
    "LinearRegressor": "estimator_compat.canned.linear_v2",
    "add_metrics": "estimator_compat.extenders",
    "classifier_parse_example_spec": "estimator_compat.head.parse_spec",
    "regressor_parse_example_spec": "estimator_compat.head.parse_spec",
    "install": "estimator_compat.api.installer",
    "adapters": "estimator_compat.adapters",
    "experimental": "estimator_compat.experimental",
    "export": "estimator_compat.export",
    "inputs": "estimator_compat.inputs",
    "tpu": "estimator_compat.tpu",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
  """Loads a public name the first time it is used."""
  spec = _PUBLIC.get(name)
  if spec is None:
    raise AttributeError(
        f"module 'estimator_compat' has no attribute {name!r}")
  # Once, with the first public name: it imports TensorFlow anyway, which
  # dwarfs reading two distributions' metadata.
  importlib.import_module("estimator_compat.api.tf_versions").check_once()
  module_name, _, attribute = spec.partition(":")
  module = importlib.import_module(module_name)
  if attribute:
    value = getattr(module, attribute)
  else:
    value = module if module_name.endswith("." + name) else getattr(
        module, name)
  globals()[name] = value
  return value


def load_ipython_extension(ipython: Any) -> None:
  """`%load_ext estimator_compat` in IPython or Jupyter: calls install()."""
  del ipython  # install() acts on the process, not on the shell.
  importlib.import_module("estimator_compat.api.installer").install()


def __dir__() -> List[str]:
  return sorted(set(globals()) | set(_PUBLIC))
