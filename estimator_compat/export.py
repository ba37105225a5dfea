"""`tf.estimator.export`: the export output classes.

TensorFlow 2.21 still ships the legacy export outputs (the Estimator
re-exported these very classes), so `EstimatorSpec.export_outputs` written
for the real Estimator builds unchanged. Serving input receivers and
`Estimator.export_saved_model` are not part of this release yet.
"""

# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.saved_model.model_utils.export_output import (
    ClassificationOutput, ExportOutput, PredictOutput, RegressionOutput)

__all__ = ["ClassificationOutput", "ExportOutput", "PredictOutput",
           "RegressionOutput"]
