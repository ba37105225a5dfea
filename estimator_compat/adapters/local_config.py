"""The RunConfig a model_fn or input_fn gets inside a TF2 loop by default.

RunConfig reads TF_CONFIG and holds it to the Estimator's rules (a cluster
needs one chief). In a TF2 loop the cluster belongs to the strategy, and
MultiWorkerMirroredStrategy clusters of workers alone are common, so the
adapters' default config is built as on a single machine: TF_CONFIG is not
read (the model_fn sees is_chief=True and no cluster). Pass a RunConfig to
give the model_fn other values.
"""

import contextlib
import os
from typing import Iterator

from estimator_compat.run_config import RunConfig

_TF_CONFIG = "TF_CONFIG"


@contextlib.contextmanager
def _without_tf_config() -> Iterator[None]:
  saved = os.environ.pop(_TF_CONFIG, None)
  try:
    yield
  finally:
    if saved is not None:
      os.environ[_TF_CONFIG] = saved


def default_config() -> RunConfig:
  """RunConfig() as on one machine, whatever TF_CONFIG says."""
  with _without_tf_config():
    return RunConfig()
