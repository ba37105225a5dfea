"""`tf.estimator.export`: serving receivers and export outputs.

The export output classes are TensorFlow's own (the Estimator re-exported
these very classes); the receivers are ours, with the legacy behaviour.
"""

# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.saved_model.model_utils.export_output import (
    ClassificationOutput, ExportOutput, PredictOutput, RegressionOutput)

from estimator_compat.export.receivers import (
    ServingInputReceiver, TensorServingInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn)

__all__ = [
    "ClassificationOutput", "ExportOutput", "PredictOutput",
    "RegressionOutput", "ServingInputReceiver", "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
]
