"""estimator_compat: legacy `tf.estimator` programs on modern TensorFlow.

Use it as `import estimator_compat as tf_estimator`, or call
`estimator_compat.install()` once so that `tf.estimator` resolves here.
Importing this package routes `tf.keras` to tf-keras (Keras 2), which legacy
model code needs; it must therefore be imported before anything reads
`tf.keras`.
"""

from estimator_compat._keras import ensure_legacy_keras as _ensure_legacy_keras

_ensure_legacy_keras()

# pylint: disable=g-import-not-at-top,wrong-import-position
from estimator_compat import export
from estimator_compat import inputs
from estimator_compat.estimator import Estimator
from estimator_compat.export.exporters import (BestExporter, FinalExporter,
                                        LatestExporter)
from estimator_compat.hooks import (
    CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
    GlobalStepWaiterHook, LoggingTensorHook, NanLossDuringTrainingError,
    NanTensorHook, ProfilerHook, SecondOrStepTimer, SessionRunArgs,
    SessionRunContext, SessionRunHook, SessionRunValues, StepCounterHook,
    StopAtStepHook, SummarySaverHook)
from estimator_compat.install import install
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.run_config import RunConfig
from estimator_compat.spec import EstimatorSpec
from estimator_compat.training import (EvalSpec, Exporter, TrainSpec,
                                       train_and_evaluate)
from estimator_compat.warm_starting import VocabInfo, WarmStartSettings

__version__ = "0.1.0"

__all__ = [
    "BestExporter", "FinalExporter", "LatestExporter",
    "CheckpointSaverHook", "CheckpointSaverListener", "Estimator",
    "EstimatorSpec", "EvalSpec", "Exporter", "FeedFnHook", "FinalOpsHook",
    "GlobalStepWaiterHook", "LoggingTensorHook", "ModeKeys",
    "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook", "RunConfig",
    "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext",
    "SessionRunHook", "SessionRunValues", "StepCounterHook", "StopAtStepHook",
    "SummarySaverHook", "TrainSpec", "VocabInfo", "WarmStartSettings",
    "export", "inputs", "install", "train_and_evaluate",
]
