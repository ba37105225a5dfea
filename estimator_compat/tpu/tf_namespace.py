"""Puts TF 2.15's TPU embedding parameter classes back on TensorFlow.

TF 2.15 had `tf.compat.v1.tpu.experimental.AdagradParameters`,
`AdamParameters`, `FtrlParameters` and `StochasticGradientDescentParameters`
for an `EmbeddingConfigSpec`; TF 2.21 has none of them. install() sets ours
(estimator_compat.tpu.embedding_parameters) there, never replacing a name
TensorFlow has.
"""

import importlib
from typing import Tuple

from estimator_compat.tpu import embedding_parameters

NAMES: Tuple[str, ...] = ("AdagradParameters", "AdamParameters",
                          "FtrlParameters",
                          "StochasticGradientDescentParameters")
# Every spelling of TensorFlow's TF1 `tpu.experimental` namespace.
NAMESPACES: Tuple[str, ...] = (
    "tensorflow._api.v2.compat.v1.tpu.experimental",
    "tensorflow._api.v2.compat.v2.compat.v1.tpu.experimental",
    "tensorflow._api.v2.compat.v1.compat.v1.tpu.experimental")


def add_embedding_parameters() -> None:
  """Sets the parameter classes on each TF1 `tpu.experimental` namespace."""
  for path in NAMESPACES:
    try:
      module = importlib.import_module(path)
    except ImportError:
      continue
    for name in NAMES:
      if not hasattr(module, name):
        setattr(module, name, getattr(embedding_parameters, name))
