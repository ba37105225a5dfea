"""`tf.compat.v1.estimator.experimental`: the TF2 namespace's hooks and
helpers (LinearSDCA among them), and the canned logit_fn builders."""

from estimator_compat.api import experimental_names as _names

__all__ = _names.namespace_dir_v1()
__getattr__ = _names.namespace_getattr(
    "tf.compat.v1.estimator.experimental", _names.NOT_OFFERED_V1, globals(),
    {**_names.OFFERED, **_names.OFFERED_V1_ONLY})
__dir__ = _names.namespace_dir_v1
