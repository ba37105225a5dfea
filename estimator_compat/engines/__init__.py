"""Engines run one call of a mode (train, evaluate, predict) for the front.

Which engine runs is decided in the front (front/configuration.py) and
comes down in ModelSetup.choices.

`graph`: TF1 Graph + MonitoredTrainingSession, the faithful path.
`function`: the model_fn traced into tf.function step functions.
"""

import types

from estimator_compat.front.configuration import DEFAULT_ENGINE, ENGINES

__all__ = ["DEFAULT_ENGINE", "ENGINES", "get_engine"]


def get_engine(name: str) -> types.ModuleType:
  """The module with train/evaluate/predict for an engine name.

  The module satisfies `engines.base.Engine` (keyword arguments only).
  """
  # pylint: disable=g-import-not-at-top
  if name == "function":
    from estimator_compat.engines.function import loops
    return loops
  from estimator_compat.engines import graph
  return graph
