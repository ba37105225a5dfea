"""Engines run one call of a mode (train, evaluate, predict) for the front.

`graph`: TF1 Graph + MonitoredTrainingSession, the faithful path.
`function`: the model_fn traced into tf.function step functions.
"""

import os
import types

ENGINES = ("graph", "function")
ENV_VAR = "ESTIMATOR_COMPAT_ENGINE"
DEFAULT_ENGINE = "function"


def resolve_engine_name(requested=None) -> str:
  """RunConfig(engine=...) if set, else $ESTIMATOR_COMPAT_ENGINE, else default.

  Raises:
    ValueError: an unknown engine name.
  """
  name = requested or os.environ.get(ENV_VAR) or DEFAULT_ENGINE
  if name not in ENGINES:
    source = "RunConfig(engine=...)" if requested else ENV_VAR
    raise ValueError(
        f"Unknown engine {name!r} (from {source}). Fix: use one of {ENGINES}.")
  return name


def engine_chosen(requested=None) -> bool:
  """Whether RunConfig(engine=...) or $ESTIMATOR_COMPAT_ENGINE named one.

  When neither did, each call runs on the function engine unless it needs
  the graph engine (engines/dispatch.py).
  """
  return bool(requested or os.environ.get(ENV_VAR))


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
