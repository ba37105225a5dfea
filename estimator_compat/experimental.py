"""`tf.estimator.experimental`: early stopping, in-training evaluation and
helpers (see experimental_names.OFFERED). Names load on first use."""

from estimator_compat.api import experimental_names as _names

__all__ = _names.namespace_dir()
__getattr__ = _names.namespace_getattr(
    "tf.estimator.experimental", _names.NOT_OFFERED_V2, globals(),
    {**_names.OFFERED, **_names.OFFERED_V2_ONLY})
__dir__ = _names.namespace_dir
