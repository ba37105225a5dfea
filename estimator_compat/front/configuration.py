"""The one place that decides the engine and the strategy flags' choice.

Two inputs come from outside a program's code, and are read here only:
- the engine: `RunConfig(engine=...)`, else $ESTIMATOR_COMPAT_ENGINE, else
  the default ("function", rerouted per call when it cannot be exact);
- the strategy flags (`--strategy`, `--min_shard_bytes`, `--max_shards`),
  which the flags' parser (distribute/flags.py, the binary) hands over as a
  `StrategyChoice` value with `set_strategy_flags`.
Each Estimator call resolves them once, with `resolve`, into a frozen
`Choices` that its ModelSetup carries down; no deeper module reads the
environment or the flags (tests/test_configuration_path.py checks it).
"""

import dataclasses
import os
from typing import Any, Optional

ENGINES = ("graph", "function")
ENGINE_ENV = "ESTIMATOR_COMPAT_ENGINE"
DEFAULT_ENGINE = "function"
STRATEGY_NAMES = ("default", "one_device", "mirrored",
                  "multi_worker_mirrored", "parameter_server")


@dataclasses.dataclass(frozen=True)
class StrategyChoice:
  """The strategy of Estimators whose RunConfig names none (the flags).

  Attributes:
    name: one of STRATEGY_NAMES, or None (TF_CONFIG decides).
    min_shard_bytes: PS variable partitioning, when RunConfig sets none.
    max_shards: the same partitioner's maximum number of shards.
  """
  name: Optional[str] = None
  min_shard_bytes: Optional[int] = None
  max_shards: Optional[int] = None

  def __post_init__(self):
    if self.name is not None and self.name not in STRATEGY_NAMES:
      raise ValueError(f"Unknown strategy {self.name!r}. Fix: use one of "
                       f"{STRATEGY_NAMES}.")


@dataclasses.dataclass(frozen=True)
class Choices:
  """The engine and strategy choice of one Estimator call.

  Attributes:
    engine: the engine name (one of ENGINES).
    engine_chosen: whether RunConfig(engine=...) or $ESTIMATOR_COMPAT_ENGINE
      named it; otherwise each call picks its engine (engines/dispatch.py).
    strategy: the strategy flags' choice.
  """
  engine: str = DEFAULT_ENGINE
  engine_chosen: bool = False
  strategy: StrategyChoice = StrategyChoice()

  @property
  def graph_chosen(self) -> bool:
    """Whether the graph engine was chosen (not merely rerouted to)."""
    return self.engine_chosen and self.engine == "graph"


# The strategy flags' choice for this process: user input, as the
# environment is, set by whoever parsed the flags.
_strategy_flags = [StrategyChoice()]


def set_strategy_flags(choice: StrategyChoice) -> None:
  """Makes `choice` the strategy of Estimators whose RunConfig names none.

  The flags' parsers call it (distribute/flags.py, the binary); so may a
  program or a test. It applies to calls made after it.
  """
  if not isinstance(choice, StrategyChoice):
    raise TypeError(f"set_strategy_flags takes a StrategyChoice, got "
                    f"{type(choice).__name__}.")
  _strategy_flags[0] = choice


def strategy_flags() -> StrategyChoice:
  """The strategy flags' choice in effect (all None when none was made)."""
  return _strategy_flags[0]


def set_process_strategy(name: Optional[str]) -> None:
  """Sets the flags' strategy name, keeping their partitioning.

  Raises:
    ValueError: an unknown name.
  """
  set_strategy_flags(dataclasses.replace(strategy_flags(), name=name))


def set_process_partitioning(min_shard_bytes: Optional[int],
                             max_shards: Optional[int]) -> None:
  """Sets the flags' PS partitioning, keeping their strategy name."""
  set_strategy_flags(dataclasses.replace(
      strategy_flags(), min_shard_bytes=min_shard_bytes,
      max_shards=max_shards))


def process_strategy_name() -> Optional[str]:
  """The flags' strategy name (None: none chosen)."""
  return strategy_flags().name


def engine_name(requested: Optional[str] = None) -> str:
  """RunConfig(engine=...) if set, else $ESTIMATOR_COMPAT_ENGINE, else default.

  Raises:
    ValueError: an unknown engine name.
  """
  name = requested or os.environ.get(ENGINE_ENV) or DEFAULT_ENGINE
  if name not in ENGINES:
    source = "RunConfig(engine=...)" if requested else ENGINE_ENV
    raise ValueError(
        f"Unknown engine {name!r} (from {source}). Fix: use one of {ENGINES}.")
  return name


def engine_chosen(requested: Optional[str] = None) -> bool:
  """Whether RunConfig(engine=...) or $ESTIMATOR_COMPAT_ENGINE named one."""
  return bool(requested or os.environ.get(ENGINE_ENV))


def resolve(config: Any) -> Choices:
  """The choices of one call under `config` (a RunConfig).

  Raises:
    ValueError: an unknown engine name.
  """
  requested = config._engine  # pylint: disable=protected-access
  return Choices(engine=engine_name(requested),
                 engine_chosen=engine_chosen(requested),
                 strategy=strategy_flags())
