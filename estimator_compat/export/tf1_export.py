"""`export_savedmodel`: the TF1 Estimator's export method.

TF 2.15's `tf.compat.v1.estimator.Estimator` kept the deprecated
`export_savedmodel` (TF2's Estimator hid it); estimators built on the TF1
class, such as the canned RNN estimators, have it.
"""

from typing import Any, Callable, Dict, Optional

from tensorflow.python.platform import tf_logging as logging

from estimator_compat.export import saved_model_writer
from estimator_compat.mode_keys import ModeKeys


class ExportSavedModelV1Mixin:
  """Adds `export_savedmodel` to an `Estimator` subclass."""

  def export_savedmodel(self, export_dir_base: str,
                        serving_input_receiver_fn: Optional[
                            Callable[[], Any]],
                        assets_extra: Optional[Dict[str, str]] = None,
                        as_text: bool = False,
                        checkpoint_path: Optional[str] = None,
                        strip_default_attrs: bool = False) -> bytes:
    """Exports the PREDICT graph as a SavedModel (see export_saved_model).

    Unlike `export_saved_model`, default-valued op attributes stay in the
    graph unless `strip_default_attrs`.

    Raises:
      ValueError: no `serving_input_receiver_fn`, or no checkpoint.
    """
    if not serving_input_receiver_fn:
      raise ValueError(
          "An input_receiver_fn must be defined. Fix: pass a "
          "serving_input_receiver_fn returning a ServingInputReceiver.")
    logging.warning(
        "export_savedmodel (from tensorflow_estimator.python.estimator."
        "estimator) is deprecated. Instructions for updating: This function "
        "has been renamed, use `export_saved_model` instead.")
    return saved_model_writer.export_all_saved_models(
        self._setup, export_dir_base,  # pylint: disable=protected-access
        {ModeKeys.PREDICT: serving_input_receiver_fn}, assets_extra, as_text,
        checkpoint_path, strip_default_attrs=strip_default_attrs)
