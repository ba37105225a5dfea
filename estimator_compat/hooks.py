"""The SessionRunHook family under the names `tf.estimator` exported.

TensorFlow 2.21 still ships every one of these in `tf.compat.v1.train`; the
graph engine runs them with their full semantics, so they are re-exported,
not rewritten.
"""

import tensorflow as tf

_train = tf.compat.v1.train

SessionRunHook = _train.SessionRunHook
SessionRunArgs = _train.SessionRunArgs
SessionRunContext = _train.SessionRunContext
SessionRunValues = _train.SessionRunValues
CheckpointSaverHook = _train.CheckpointSaverHook
CheckpointSaverListener = _train.CheckpointSaverListener
FeedFnHook = _train.FeedFnHook
FinalOpsHook = _train.FinalOpsHook
GlobalStepWaiterHook = _train.GlobalStepWaiterHook
LoggingTensorHook = _train.LoggingTensorHook
NanLossDuringTrainingError = _train.NanLossDuringTrainingError
NanTensorHook = _train.NanTensorHook
ProfilerHook = _train.ProfilerHook
SecondOrStepTimer = _train.SecondOrStepTimer
StepCounterHook = _train.StepCounterHook
StopAtStepHook = _train.StopAtStepHook
SummarySaverHook = _train.SummarySaverHook

__all__ = [
    "SessionRunHook", "SessionRunArgs", "SessionRunContext",
    "SessionRunValues", "CheckpointSaverHook", "CheckpointSaverListener",
    "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook", "LoggingTensorHook",
    "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook",
    "SecondOrStepTimer", "StepCounterHook", "StopAtStepHook",
    "SummarySaverHook",
]
