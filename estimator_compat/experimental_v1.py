"""`tf.compat.v1.estimator.experimental`: the TF2 namespace's hooks and
helpers; its canned-estimator names (KMeans, the logit_fn builders) differ."""

from estimator_compat import experimental_names as _names

__all__ = _names.namespace_dir()
__getattr__ = _names.namespace_getattr("tf.compat.v1.estimator.experimental",
                                       _names.NOT_OFFERED_V1, globals())
__dir__ = _names.namespace_dir
