"""Makes `tf.keras` resolve to tf-keras (Keras 2) before TensorFlow decides.

Legacy Estimator code uses `tf.compat.v1.layers`, `tf.keras` layers inside
`model_fn` and legacy variable names; all of that only works with tf-keras.
TensorFlow picks the Keras implementation lazily, the first time an attribute
of `tf.keras` (or `tf.losses`, `tf.compat.v1.layers`, ...) is read, from the
environment variable `TF_USE_LEGACY_KERAS`.
"""

import importlib.util
import os
import sys

from estimator_compat.api import tf_versions

_ENV = "TF_USE_LEGACY_KERAS"

_KERAS3_MESSAGE = (
    "estimator_compat needs tf.keras to be tf-keras (Keras 2), but TensorFlow "
    "has already resolved tf.keras to Keras 3 in this process. Fix: import "
    "estimator_compat before anything touches tf.keras, or set the environment "
    "variable TF_USE_LEGACY_KERAS=1 before starting Python, and make sure the "
    "tf-keras package is installed (pip install '{requirement}')."
)


def ensure_legacy_keras() -> None:
  """Routes tf.keras to tf-keras, or raises ImportError if it is too late.

  Raises:
    ImportError: TensorFlow already resolved `tf.keras` to Keras 3, or the
      tf-keras package is missing.
  """
  if os.environ.get(_ENV) not in ("1", "true", "True"):
    os.environ[_ENV] = "1"
  tf = sys.modules.get("tensorflow")
  if tf is not None:
    resolved = tf.__dict__.get("keras")
    name = getattr(resolved, "__name__", "") if resolved is not None else ""
    initialized = getattr(type(resolved), "__name__", "") != "KerasLazyLoader"
    if resolved is not None and initialized and not name.startswith("tf_keras"):
      raise ImportError(_KERAS3_MESSAGE.format(
          requirement=tf_versions.matching_tf_keras(tf.__version__)))
    if resolved is not None and not initialized:
      version = resolved.__dict__.get("_tfll_keras_version")
      if version is not None and version != "tf_keras":
        raise ImportError(_KERAS3_MESSAGE.format(
          requirement=tf_versions.matching_tf_keras(tf.__version__)))
  # Found, not imported: importing tf_keras would import TensorFlow.
  if importlib.util.find_spec("tf_keras") is None:
    raise ImportError(
        "estimator_compat needs the tf-keras package for tf.compat.v1.layers "
        "and legacy Keras layers. Fix: pip install "
        f"'{tf_versions.matching_tf_keras(tf_versions.installed_tensorflow())}'.")
