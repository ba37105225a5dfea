"""`tf.estimator.export`: serving receivers and export outputs.

The export output classes are TensorFlow's own (the Estimator re-exported
these very classes); the receivers are ours, with the legacy behaviour. The
supervised receivers (`supervised`) are not in `tf.estimator.export`, as in
the Estimator: its module paths `export.export` / `export.export_lib` and
`tf.estimator.experimental` hold them.
"""

# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.saved_model.model_utils.export_output import (
    ClassificationOutput, EvalOutput, ExportOutput, PredictOutput,
    RegressionOutput)

from estimator_compat.export import receivers as receivers
from estimator_compat.export import supervised as supervised
from estimator_compat.export.receivers import (
    ServingInputReceiver, TensorServingInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn)

__all__ = [
    "ClassificationOutput", "EvalOutput", "ExportOutput", "PredictOutput",
    "RegressionOutput", "ServingInputReceiver", "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
]
