"""`tf.estimator.experimental`: the names of it that estimator_compat has.

The Estimator's `experimental` namespace also held canned-estimator helpers
and hooks (`InMemoryEvaluatorHook`, `make_early_stopping_hook`, ...) that
estimator_compat does not implement; asking for one fails with that said.
"""

from estimator_compat.export.supervised import (
    build_raw_supervised_input_receiver_fn)

__all__ = ["build_raw_supervised_input_receiver_fn"]


def __getattr__(name: str):
  raise AttributeError(
      f"module 'tf.estimator.experimental' has no attribute {name!r}: "
      "estimator_compat does not implement it (it has "
      f"{', '.join(__all__)}).")
