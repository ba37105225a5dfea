"""The real package's public module paths, pointing at estimator_compat.

Legacy programs (and tf-keras) import the Estimator by module path, e.g.
`from tensorflow_estimator.python.estimator import model_fn as model_fn_lib`
and then use `model_fn_lib.EstimatorSpec`. `register()` puts one real module
object per such path into `sys.modules`, holding only the public names that
estimator_compat implements. A name we do not implement is absent, so it
fails as it would on an install without it: `AttributeError`, or
`ImportError` for `from ... import name`. Modules we have nothing for are
not registered: importing them raises `ModuleNotFoundError`. `keras_lib` is
registered: tf-keras's `tf.keras.estimator.model_to_estimator` imports it.
"""

import importlib
import importlib.machinery
import sys
import types
from typing import Any, Dict, List, NamedTuple, Tuple

ROOT = "tensorflow_estimator"
BASE = ROOT + ".python.estimator"


class ModulePath(NamedTuple):
  """One module of the real package and where its names come from.

  Attributes:
    path: module path under `tensorflow_estimator.python.estimator`.
    source: the estimator_compat module holding the names.
    names: the public names that module path exposes; `"A=B"` exposes our
      `B` as `A` (the real module's name for the class we implement as `B`);
      `B` may be a dotted path under `source` (`"A=submodule.A"`).
  """
  path: str
  source: str
  names: Tuple[str, ...]


_HOOK_NAMES = (
    "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook",
    "FinalOpsHook", "GlobalStepWaiterHook", "LoggingTensorHook",
    "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook",
    "SecondOrStepTimer", "StepCounterHook", "StopAtStepHook",
    "SummarySaverHook")
_RECEIVER_NAMES = (
    "ServingInputReceiver", "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn")
_SUPERVISED_NAMES = tuple(
    f"{name}=supervised.{name}" for name in (
        "SupervisedInputReceiver", "UnsupervisedInputReceiver",
        "build_raw_supervised_input_receiver_fn",
        "build_supervised_input_receiver_fn_from_input_fn"))
_OUTPUT_NAMES = (
    "ClassificationOutput", "EvalOutput", "ExportOutput", "PredictOutput",
    "RegressionOutput")

# The modules of tensorflow_estimator/python/estimator that legacy programs,
# tf-keras and the Estimator's own tests import, with the subset of their
# public names that estimator_compat implements.
MODULES: Tuple[ModulePath, ...] = (
    # EstimatorV2 is the class the real package exports as TF2's
    # `tf.estimator.Estimator`; ours serves both APIs.
    ModulePath("estimator", "estimator_compat",
               ("Estimator", "EstimatorV2=Estimator", "ModeKeys", "VocabInfo",
                "WarmStartSettings",
                "maybe_overwrite_model_dir_and_session_config="
                "estimator.maybe_overwrite_model_dir_and_session_config")),
    # The TF1 namespace's objects (its canned estimators are the TF1 ones).
    ModulePath("estimator_lib", "estimator_compat.v1",
               ("Estimator", "EstimatorSpec", "EvalSpec",
                "Exporter", "FinalExporter", "LatestExporter", "ModeKeys",
                "RunConfig", "TrainSpec", "VocabInfo", "WarmStartSettings",
                "train_and_evaluate",
                "BaselineClassifier", "BaselineEstimator", "BaselineRegressor",
                "DNNClassifier", "DNNEstimator", "DNNRegressor",
                "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator",
                "DNNLinearCombinedRegressor", "LinearClassifier",
                "LinearEstimator", "LinearRegressor",
                "dnn_logit_fn_builder=experimental.dnn_logit_fn_builder",
                "linear_logit_fn_builder=experimental.linear_logit_fn_builder",
                "classifier_parse_example_spec",
                "regressor_parse_example_spec", "add_metrics", "Head",
                "BinaryClassHead", "MultiClassHead", "MultiHead",
                "MultiLabelHead", "LogisticRegressionHead",
                "PoissonRegressionHead", "RegressionHead",
                "call_logit_fn=experimental.call_logit_fn",
                "TPUEstimator=tpu.TPUEstimator",
                "make_early_stopping_hook=experimental.make_early_stopping_hook",
                "stop_if_higher_hook=experimental.stop_if_higher_hook",
                "stop_if_lower_hook=experimental.stop_if_lower_hook",
                "stop_if_no_decrease_hook=experimental.stop_if_no_decrease_hook",
                "stop_if_no_increase_hook="
                "experimental.stop_if_no_increase_hook")),
    ModulePath("model_fn", "estimator_compat",
               ("EstimatorSpec", "LOSS_METRIC_KEY=spec.LOSS_METRIC_KEY",
                "ModeKeys", "call_logit_fn=canned.logit_fn.call_logit_fn")),
    ModulePath("mode_keys", "estimator_compat", ("ModeKeys",)),
    ModulePath("run_config", "estimator_compat.run_config",
               ("RunConfig", "TaskType",
                "get_default_session_config=default_session_config")),
    ModulePath("training", "estimator_compat",
               ("EvalSpec", "TrainSpec", "train_and_evaluate")),
    ModulePath("exporter", "estimator_compat",
               ("BestExporter", "Exporter", "FinalExporter",
                "LatestExporter")),
    ModulePath("util", "estimator_compat", ()),
    ModulePath("export", "estimator_compat.export", ()),
    ModulePath("export.export", "estimator_compat.export",
               _RECEIVER_NAMES + _SUPERVISED_NAMES + tuple(
                   f"{name}=receivers.{name}" for name in (
                       "SINGLE_FEATURE_DEFAULT_NAME",
                       "SINGLE_LABEL_DEFAULT_NAME",
                       "SINGLE_RECEIVER_DEFAULT_NAME"))),
    ModulePath("export.export_lib", "estimator_compat.export",
               _RECEIVER_NAMES + _SUPERVISED_NAMES + _OUTPUT_NAMES + (
                   "EXPORT_TAG_MAP=saved_model_writer.EXPORT_TAG_MAP",)),
    ModulePath("export.export_output", "estimator_compat.export",
               _OUTPUT_NAMES),
    ModulePath("inputs", "estimator_compat.inputs", ()),
    ModulePath("inputs.inputs", "estimator_compat.inputs",
               ("numpy_input_fn", "pandas_input_fn")),
    ModulePath("inputs.numpy_io", "estimator_compat.inputs",
               ("numpy_input_fn",)),
    ModulePath("inputs.pandas_io", "estimator_compat.inputs",
               ("pandas_input_fn",)),
    ModulePath("hooks", "estimator_compat", ()),
    ModulePath("hooks.hooks", "estimator_compat",
               ("InMemoryEvaluatorHook=in_training.in_memory_evaluator."
                "InMemoryEvaluatorHook",
                "make_stop_at_checkpoint_step_hook="
                "in_training.checkpoint_step_hook."
                "make_stop_at_checkpoint_step_hook")),
    ModulePath("early_stopping", "estimator_compat.in_training.early_stopping",
               ("make_early_stopping_hook", "read_eval_metrics",
                "stop_if_higher_hook", "stop_if_lower_hook",
                "stop_if_no_decrease_hook", "stop_if_no_increase_hook")),
    ModulePath("hooks.session_run_hook", "estimator_compat",
               ("SessionRunArgs", "SessionRunContext", "SessionRunHook",
                "SessionRunValues")),
    ModulePath("hooks.basic_session_run_hooks", "estimator_compat",
               _HOOK_NAMES),
    ModulePath("canned", "estimator_compat.canned", ()),
    # tensorflow-lattice's canned estimators import it.
    ModulePath("canned.optimizers", "estimator_compat.canned.optimizers",
               ("get_optimizer_instance", "get_optimizer_instance_v2")),
    # TF 2.15's TF1 heads, under their private names: legacy programs
    # (DeepCTR) subclass `_Head` and call the factories.
    ModulePath("canned.head", "estimator_compat.head", (
        "_Head=tf1_head_base.TF1HeadBase", "LossSpec=tf1_heads.LossSpec",
        "_summary_key=tf1_head_base.summary_key",
        "_DEFAULT_SERVING_KEY=tf1_head_base.DEFAULT_SERVING_KEY",
        "_CLASSIFY_SERVING_KEY=tf1_head_base.CLASSIFY_SERVING_KEY",
        "_REGRESS_SERVING_KEY=tf1_head_base.REGRESS_SERVING_KEY",
        "_PREDICT_SERVING_KEY=tf1_head_base.PREDICT_SERVING_KEY",
        "_binary_logistic_head_with_sigmoid_cross_entropy_loss="
        "tf1_heads.binary_class_head",
        "_multi_class_head_with_softmax_cross_entropy_loss="
        "tf1_heads.multi_class_head",
        "_regression_head=tf1_heads.regression_head",
        "_binary_logistic_or_multi_class_head="
        "tf1_heads.binary_or_multi_class_head",
        # Bound at import by tensorflow-privacy's DP heads; each refuses
        # when used (head/tf1_head_internals.py).
        "_BinaryLogisticHeadWithSigmoidCrossEntropyLoss="
        "tf1_head_internals.BinaryLogisticHeadWithSigmoidCrossEntropyLoss",
        "_MultiClassHeadWithSoftmaxCrossEntropyLoss="
        "tf1_head_internals.MultiClassHeadWithSoftmaxCrossEntropyLoss",
        *(f"_{name}=tf1_head_internals.{name}" for name in (
            "all_class_ids", "all_classes", "append_update_ops",
            "check_logits_final_dim", "classification_output",
            "create_eval_metrics_tuple", "validate_loss_fn_args")))),
    ModulePath("canned.dnn", "estimator_compat.canned.dnn",
               ("DNNClassifier", "DNNClassifierV2", "DNNEstimator",
                "DNNEstimatorV2", "DNNRegressor", "DNNRegressorV2",
                "dnn_logit_fn_builder", "dnn_logit_fn_builder_v2",
                "dnn_model_fn_v2")),
    ModulePath("canned.dnn_linear_combined",
               "estimator_compat.canned.dnn_linear_combined",
               tuple(f"DNNLinearCombined{kind}{version}"
                     for kind in ("Classifier", "Estimator", "Regressor")
                     for version in ("", "V2"))),
    ModulePath("extenders", "estimator_compat", ("add_metrics",)),
    ModulePath("canned.metric_keys", "estimator_compat.head.keys",
               ("MetricKeys",)),
    ModulePath("canned.prediction_keys", "estimator_compat.head.keys",
               ("PredictionKeys",)),
    ModulePath("head", "estimator_compat.head", ()),
    ModulePath("head.head_utils", "estimator_compat.head.head_utils",
               ("binary_or_multi_class_head",)),
    ModulePath("head.base_head", "estimator_compat.head",
               ("Head", "call_loss_fn=checks.call_loss_fn")),
    ModulePath("head.binary_class_head", "estimator_compat.head",
               ("BinaryClassHead",)),
    ModulePath("head.multi_class_head", "estimator_compat.head",
               ("MultiClassHead",)),
    ModulePath("head.multi_head", "estimator_compat.head", ("MultiHead",)),
    ModulePath("head.sequential_head", "estimator_compat.head.sequential_head",
               ("SequentialHeadWrapper", "_SequentialHead")),
    ModulePath("head.multi_label_head", "estimator_compat.head",
               ("MultiLabelHead",)),
    ModulePath("head.regression_head", "estimator_compat.head",
               ("LogisticRegressionHead", "PoissonRegressionHead",
                "RegressionHead")),
    ModulePath("tpu", "estimator_compat.tpu", ()),
    ModulePath("tpu.tpu_estimator", "estimator_compat.tpu.tpu_estimator",
               ("ExamplesPerSecondHook", "ExportSavedModelApiVersion",
                "TPUEstimator", "TPUEstimatorSpec")),
    ModulePath("tpu.tpu_config", "estimator_compat.tpu.tpu_config",
               ("InputPipelineConfig", "RunConfig", "TPUConfig")),
    ModulePath("tpu._tpu_estimator_embedding",
               "estimator_compat.tpu.embedding_config_spec",
               ("EmbeddingConfigSpec",) + tuple(
                   f"{name}=embedding_parameters.{name}" for name in (
                       "AdagradParameters", "AdamParameters",
                       "FtrlParameters",
                       "StochasticGradientDescentParameters"))),
    ModulePath("tpu.util", "estimator_compat.tpu.tpu_config",
               ("check_positive_integer", "parse_iterations_per_loop")),
    # tf-keras's tf.keras.estimator.model_to_estimator calls this module's.
    ModulePath("keras_lib", "estimator_compat.keras.keras_model_estimator",
               ("model_to_estimator",
                "FormattedKeyError")),
    ModulePath("canned.linear", "estimator_compat.canned.linear",
               ("LinearClassifier", "LinearClassifierV2", "LinearEstimator",
                "LinearEstimatorV2", "LinearModel", "LinearRegressor",
                "LinearRegressorV2", "LinearSDCA", "linear_logit_fn_builder")),
    ModulePath("canned.parsing_utils", "estimator_compat.head.parse_spec",
               ("classifier_parse_example_spec="
                "classifier_parse_example_spec_v1",
                "regressor_parse_example_spec=regressor_parse_example_spec_v1",
                "classifier_parse_example_spec_v2="
                "classifier_parse_example_spec",
                "regressor_parse_example_spec_v2="
                "regressor_parse_example_spec")),
    ModulePath("canned.rnn", "estimator_compat.canned.rnn",
               ("RNNClassifier", "RNNEstimator", "RNNModel", "USE_DEFAULT")),
    ModulePath("canned.boosted_trees",
               "estimator_compat.canned.boosted_trees.estimators",
               ("BoostedTreesClassifier", "BoostedTreesEstimator",
                "BoostedTreesRegressor")),
    ModulePath("canned.kmeans", "estimator_compat.canned.kmeans",
               ("KMeansClustering",
                # kmeans_test calls this private helper.
                "_parse_features_if_necessary=_input_points")),
    # LinearSDCA's model and table, which the Estimator's own tests import
    # under their private names.
    ModulePath("canned.linear_optimizer.python.utils.sdca_ops",
               "estimator_compat.canned.sdca.sdca_model",
               ("_SDCAModel=SDCAModel",
                "_SparseFeatureColumn=SparseFeatureColumn")),
    ModulePath(
        "canned.linear_optimizer.python.utils.sharded_mutable_dense_hashtable",
        "estimator_compat.canned.sdca.sharded_table",
        ("_ShardedMutableDenseHashTable=ShardedMutableDenseHashTable",)),
    ModulePath("canned.baseline", "estimator_compat.canned.baseline",
               ("BaselineClassifier", "BaselineClassifierV2",
                "BaselineEstimator", "BaselineEstimatorV2",
                "BaselineRegressor", "BaselineRegressorV2")),
)

# Module paths that are the public API namespace itself (`tf.estimator`):
# estimator_compat and its `experimental` / `export` / `inputs` subpackages.
API_ALIASES: Tuple[str, ...] = (
    ROOT + ".estimator",
    BASE + ".api._v1.estimator",
    BASE + ".api._v2.estimator",
)
# Of those, the ones that are `tf.compat.v1.estimator` (estimator_compat.v1).
# `tensorflow_estimator.estimator` was the TF1 namespace in TF 2.15 too.
V1_ALIASES: Tuple[str, ...] = (ROOT + ".estimator",
                               BASE + ".api._v1.estimator")
API_SUBPACKAGES: Tuple[str, ...] = ("experimental", "export", "inputs", "tpu",
                                     "tpu.experimental")

# The `tensorflow.*` namespaces whose `estimator` TF 2.15 answered to as a
# module too (`import tensorflow.compat.v1.estimator as est`, `from
# tensorflow.compat.v2.estimator import Estimator`): TensorFlow put the real
# package's API trees on each namespace's `__path__`. Each with its
# `API_SUBPACKAGES` (TF 2.15 had `tpu` under the TF1 trees only; it is
# registered under all, as above, so that no import of it loads a second
# copy of estimator_compat.tpu through the package's own `__path__`).
TF_V2_NAMESPACES: Tuple[str, ...] = (
    "tensorflow", "tensorflow.compat.v2", "tensorflow.compat.v1.compat.v2",
    "tensorflow.compat.v2.compat.v2", "tensorflow._api.v2.compat.v2",
    "tensorflow._api.v2.compat.v1.compat.v2",
    "tensorflow._api.v2.compat.v2.compat.v2")
TF_V1_NAMESPACES: Tuple[str, ...] = (
    "tensorflow.compat.v1", "tensorflow.compat.v1.compat.v1",
    "tensorflow.compat.v2.compat.v1", "tensorflow._api.v2.compat.v1",
    "tensorflow._api.v2.compat.v1.compat.v1",
    "tensorflow._api.v2.compat.v2.compat.v1")
# TF 2.15's own forwarding modules `tensorflow.python.estimator.*` (each the
# same-named module under `tensorflow_estimator.python.estimator`); those
# with a module in MODULES are that module.
TF_PYTHON_ROOT = "tensorflow.python.estimator"
TF_PYTHON_MODULES: Tuple[str, ...] = (
    "estimator", "estimator_lib", "model_fn", "run_config", "training",
    "exporter", "util", "export", "export.export", "export.export_lib",
    "export.export_output", "inputs", "inputs.inputs", "inputs.numpy_io",
    "inputs.pandas_io", "canned", "canned.baseline", "canned.dnn",
    "canned.dnn_linear_combined", "canned.head", "canned.linear",
    "canned.metric_keys", "canned.optimizers", "canned.parsing_utils",
    "canned.prediction_keys")


def _missing_name(module_name: str):
  """A module `__getattr__` that names what estimator_compat lacks."""

  def module_getattr(name: str):
    raise AttributeError(
        f"module {module_name!r} has no attribute {name!r}: estimator_compat "
        "does not implement it (only the public names it implements are "
        "forwarded from the real tensorflow_estimator module paths).")

  return module_getattr


def _new_module(name: str, names: Dict[str, object]) -> types.ModuleType:
  """A module object registered as a package, holding `names`."""
  module = types.ModuleType(name, f"estimator_compat's stand-in for {name}.")
  module.__spec__ = importlib.machinery.ModuleSpec(name, None,
                                                   is_package=True)
  module.__path__ = []  # A package with no files: other submodules fail.
  module.__dict__.update(names)
  module.__getattr__ = _missing_name(name)
  return module


def _register(name: str, module: types.ModuleType) -> types.ModuleType:
  """Adds `module` unless the path is taken, and links it to its parent."""
  module = sys.modules.setdefault(name, module)
  parent_name, _, child = name.rpartition(".")
  if parent_name:
    parent = sys.modules.get(parent_name)
    if parent is None:
      parent = _register(parent_name, _new_module(parent_name, {}))
    if child not in vars(parent):
      setattr(parent, child, module)
  return module


def _resolve(source: types.ModuleType, dotted: str) -> object:
  """`source.a.b.Name`: attributes, or submodules `a.b` of `source` imported.

  An attribute comes first: `experimental` of `estimator_compat.v1` is the
  namespace object it returns, not a submodule of that path.
  """
  value = source
  parts = dotted.split(".")
  for i, part in enumerate(parts):
    try:
      value = getattr(value, part)
    except AttributeError:
      if i == len(parts) - 1:
        raise
      value = importlib.import_module(
          ".".join([source.__name__] + parts[:i + 1]))
  return value


def _tensorflow_namespaces(path: str) -> List[Any]:
  """The TensorFlow module objects of namespace `path` (e.g. tf.compat.v1).

  Importing the path and reading it as attributes from `tensorflow` may give
  different objects (a TFModuleWrapper and the module it wraps): both.
  """
  found = [importlib.import_module(path)]
  value = sys.modules["tensorflow"]
  for part in path.split(".")[1:]:
    value = getattr(value, part)
  if all(value is not other for other in found):
    found.append(value)
  return found


def register_tensorflow_namespaces() -> None:
  """Makes `tensorflow[.compat.vN...].estimator` (and its subpackages) ours.

  Sets the `estimator` attribute of each TensorFlow namespace in
  TF_V2_NAMESPACES (this package) and TF_V1_NAMESPACES (estimator_compat.v1)
  and registers `<namespace>.estimator[.<subpackage>]` in `sys.modules`,
  where absent, so the module forms of the imports work too.
  """
  package = importlib.import_module("estimator_compat")
  v1_namespace = importlib.import_module("estimator_compat.v1")
  for namespaces, namespace in ((TF_V2_NAMESPACES, package),
                                (TF_V1_NAMESPACES, v1_namespace)):
    for path in namespaces:
      for module in _tensorflow_namespaces(path):
        module.estimator = namespace
      sys.modules.setdefault(f"{path}.estimator", namespace)
      for sub in API_SUBPACKAGES:
        sys.modules.setdefault(f"{path}.estimator.{sub}",
                               _subpackage(namespace, sub))


def _subpackage(namespace: Any, dotted: str) -> Any:
  """`namespace.<dotted>`: `tpu.experimental` is `namespace.tpu.experimental`."""
  for part in dotted.split("."):
    namespace = getattr(namespace, part)
  return namespace


def _register_tensorflow_python() -> None:
  """TF 2.15's `tensorflow.python.estimator.*`: our modules of those paths."""
  for path in TF_PYTHON_MODULES:
    module = sys.modules.get(f"{BASE}.{path}")
    if module is not None:
      _register(f"{TF_PYTHON_ROOT}.{path}", module)


def register() -> None:
  """Registers the real package's module paths in `sys.modules`.

  Paths already present in `sys.modules` (a real tensorflow_estimator, or an
  earlier call) are left as they are, so calling it twice is harmless.
  """
  package = importlib.import_module("estimator_compat")
  _register(ROOT, _new_module(ROOT, {}))
  v1_namespace = importlib.import_module("estimator_compat.v1")
  for alias in API_ALIASES:
    namespace = v1_namespace if alias in V1_ALIASES else package
    _register(alias, namespace)
    for sub in API_SUBPACKAGES:
      _register(f"{alias}.{sub}", _subpackage(namespace, sub))
  for entry in MODULES:
    source = importlib.import_module(entry.source)
    names = {}
    for spec in entry.names:
      name, _, ours = spec.partition("=")
      names[name] = _resolve(source, ours or name)
    _register(f"{BASE}.{entry.path}",
              _new_module(f"{BASE}.{entry.path}", names))
  _register_tensorflow_python()
