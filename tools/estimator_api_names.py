r"""Writes estimator_compat/api/api_status_tf215.py: TF 2.15's Estimator names.

Run it on the reference virtualenv (TF 2.15.1 + tensorflow-estimator 2.15.0),
never with PYTHONPATH pointing at estimator_compat:

  ~/.cache/estimator-compat/tf215-venv/bin/python tools/estimator_api_names.py \
      > estimator_compat/api/api_status_tf215.py

It walks `dir()` of `tf.estimator` and `tf.compat.v1.estimator` recursively
and records every public name, the subpackages, and the names whose
`tf.compat.v1.estimator` object is not the `tf.estimator` one (the TF1
versions of the canned estimators, for instance).
"""

import sys
import types
from typing import Dict, List, Tuple

HEADER = '''"""TF 2.15's public Estimator API (generated: do not edit).

Regenerate with tools/estimator_api_names.py on the reference virtualenv
(TensorFlow {tf_version}, tensorflow-estimator {est_version}).
estimator_compat.api.api_status gives each of these names its status.
"""

from typing import Tuple
'''


def walk(module: types.ModuleType, prefix: Tuple[str, ...],
         names: Dict[Tuple[str, ...], object],
         modules: List[Tuple[str, ...]]) -> None:
  """Records the public names under `module`, recursing into submodules."""
  for name in sorted(dir(module)):
    if name.startswith("_"):
      continue
    value = getattr(module, name)
    path = prefix + (name,)
    if isinstance(value, types.ModuleType):
      modules.append(path)
      walk(value, path, names, modules)
    else:
      names[path] = value


def tuple_source(name: str, values: List[str], comment: str) -> str:
  lines = [f"# {comment}", f"{name}: Tuple[str, ...] = ("]
  lines += [f"    \"{value}\"," for value in values]
  lines.append(")")
  return "\n".join(lines) + "\n"


def main() -> int:
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_estimator  # pylint: disable=g-import-not-at-top
  from importlib import metadata  # pylint: disable=g-import-not-at-top
  del tensorflow_estimator
  v2: Dict[Tuple[str, ...], object] = {}
  v1: Dict[Tuple[str, ...], object] = {}
  v2_modules: List[Tuple[str, ...]] = []
  v1_modules: List[Tuple[str, ...]] = []
  walk(tf.estimator, (), v2, v2_modules)
  walk(tf.compat.v1.estimator, (), v1, v1_modules)
  distinct = sorted(".".join(path) for path in set(v1) & set(v2)
                    if v1[path] is not v2[path])
  out = [HEADER.format(tf_version=tf.__version__,
                       est_version=metadata.version("tensorflow-estimator"))]
  out.append(tuple_source(
      "V2_NAMES", sorted(".".join(p) for p in v2),
      "Public names of tf.estimator, relative to it."))
  out.append(tuple_source(
      "V1_NAMES", sorted(".".join(p) for p in v1),
      "Public names of tf.compat.v1.estimator, relative to it."))
  out.append(tuple_source(
      "V2_MODULES", sorted(".".join(p) for p in v2_modules),
      "Subpackages of tf.estimator."))
  out.append(tuple_source(
      "V1_MODULES", sorted(".".join(p) for p in v1_modules),
      "Subpackages of tf.compat.v1.estimator."))
  out.append(tuple_source(
      "V1_DISTINCT", distinct,
      "Names whose tf.compat.v1.estimator object is not tf.estimator's."))
  sys.stdout.write("\n".join(out))
  return 0


if __name__ == "__main__":
  sys.exit(main())
