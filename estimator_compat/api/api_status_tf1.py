"""The status of the TF1 APIs that Estimator programs use, on TensorFlow 2.21.

Part of the registry (see `api_status`): the TF1 training APIs that
Estimator programs lean on (`tf.compat.v1.train` hooks and optimizers,
`tf.compat.v1.layers`, `tf.compat.v1.metrics`, feature columns,
`tf.keras.estimator.model_to_estimator`), and what TensorFlow 2.21 lacks:
`tf.contrib.*`, and every TF1 name that left the `tf.` namespace
(`tf.layers.dense`, `tf.train.AdamOptimizer`, `tf.Session`, ...), with the
`tf.compat.v1` name that replaces it. What exists is asked of the installed
TensorFlow itself, so nothing here lists TensorFlow's symbols.
"""

import types
from typing import Dict, Optional, Sequence, Tuple

import tensorflow as tf

from estimator_compat.api import api_status
from estimator_compat.api.api_status import Status
from estimator_compat.tpu import tf_namespace

# Hook-protocol names of tf.compat.v1.train besides the `*Hook` classes.
HOOK_NAMES = frozenset((
    "CheckpointSaverListener", "NanLossDuringTrainingError",
    "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext",
    "SessionRunHook", "SessionRunValues"))

# TF1 API families that run on estimator_compat (both engines), with a note.
FAMILIES: Dict[Tuple[str, ...], str] = {
    ("compat", "v1", "layers"): "",
    ("compat", "v1", "metrics"): "",
    ("feature_column",): "",
    ("compat", "v1", "feature_column"): "",
    ("compat", "v2", "feature_column"): "",
}

# Namespaces of `tf.` whose TF1 functions share names with TF2 ones of other
# meaning (tf.summary.scalar, tf.metrics.accuracy, tf.losses.log_loss): in
# TF1 code they mean the tf.compat.v1 ones.
TF1_AMBIGUOUS = ("summary", "metrics", "losses")

_MODEL_TO_ESTIMATOR = ("keras", "estimator", "model_to_estimator")

# TF 2.15 names TensorFlow 2.21 lacks that install() puts back on its
# namespaces: the TPU embedding parameter classes of an EmbeddingConfigSpec.
INSTALLED = frozenset(("compat", "v1", "tpu", "experimental", name)
                      for name in tf_namespace.NAMES)

_CONTRIB_NOTE = (
    "tf.contrib is not in TensorFlow 2. Fix: use its TF 2 counterpart "
    "(tf.keras, tf.data, tf.distribute, tf.compat.v1) or TensorFlow Addons")


def _lookup(root: object, parts: Sequence[str]) -> Tuple[int, object]:
  """How many of `parts` resolve from `root`, and the last value reached."""
  value = root
  for i, part in enumerate(parts):
    try:
      value = getattr(value, part)
    except Exception:  # pylint: disable=broad-except
      # TensorFlow's lazy modules may raise ImportError for a missing name.
      return i, value
  return len(parts), value


def _exists(parts: Sequence[str]) -> bool:
  return _lookup(tf, parts)[0] == len(parts)


def _name_length(root: object, parts: Sequence[str]) -> Tuple[int, bool]:
  """How many of `parts` (all resolvable) reach the first non-module.

  Args:
    root: where `parts` start.
    parts: attribute names that all resolve from `root`.

  Returns:
    (the count, whether it stopped at a non-module).
  """
  value = root
  for i, part in enumerate(parts):
    value = getattr(value, part)
    if not isinstance(value, types.ModuleType):
      return i + 1, True
  return len(parts), False


def _removed(parts: Sequence[str]) -> Tuple[int, Status]:
  """A chain TensorFlow 2.21 cannot resolve: tf-removed, and its v1 name."""
  found = 0 if parts[0] == "compat" else _lookup(tf.compat.v1, parts)[0]
  count, at_name = _name_length(tf.compat.v1, parts[:found])
  if found and (at_name or found == len(parts)):
    name = ".".join(parts[:count])
    return count, Status(
        api_status.TF_REMOVED,
        f"TensorFlow 2.21 has no tf.{name}. Fix: tf.compat.v1.{name}.",
        f"tf.compat.v1.{name}")
  missing = min(max(found, _lookup(tf, parts)[0]) + 1, len(parts))
  name = ".".join(parts[:missing])
  return missing, Status(api_status.TF_REMOVED,
                         f"TensorFlow 2.21 has no tf.{name}.")


def _model_to_estimator() -> Status:
  found = api_status.module_path_status(("keras_lib", "model_to_estimator"))
  if found is None or found[1].status != api_status.SUPPORTED:
    return Status(api_status.UNSUPPORTED, (
        "tf-keras's model_to_estimator imports "
        "tensorflow_estimator.python.estimator.keras_lib, which "
        "estimator_compat does not provide. Fix: write a model_fn that "
        "calls the Keras model, for tf.estimator.Estimator."))
  return Status(api_status.SUPPORTED)


def _train_status(name: str) -> Optional[Status]:
  """tf.compat.v1.train.<name>: hooks and optimizers."""
  if name.endswith("Hook") or name in HOOK_NAMES:
    if api_status.resolve(api_status.V2, name)[0]:
      return api_status.name_status(api_status.V2, name)
  elif not name.endswith("Optimizer"):
    return None
  if not _exists(("compat", "v1", "train", name)):
    return _removed(("compat", "v1", "train", name))[1]
  return Status(api_status.SUPPORTED)


def tf_status(parts: Sequence[str],
              tf1_code: bool) -> Optional[Tuple[int, Status]]:
  """The status of a `tf.` chain outside the Estimator namespaces.

  Args:
    parts: the chain after `tf`, e.g. ("layers", "dense").
    tf1_code: whether the file uses the TF1 API through `import tensorflow
      as tf` (it uses a name TensorFlow 2 moved to tf.compat.v1), so that
      tf.summary.scalar and the like mean the TF1 functions.

  Returns:
    (how many of `parts` name the symbol, its Status), or None when the
    chain is no Estimator-related API and exists in TensorFlow 2.21.
  """
  parts = tuple(parts)
  if not parts:
    return None
  if parts[0] == "contrib":
    return api_status.through_first_class(parts), Status(
        api_status.TF_REMOVED, f"{_CONTRIB_NOTE}.")
  for prefix in ((), ("compat", "v1"), ("compat", "v2")):
    if parts[:len(prefix) + 3] == prefix + _MODEL_TO_ESTIMATOR:
      return len(prefix) + 3, _model_to_estimator()
  if parts[:3] == ("compat", "v1", "train") and len(parts) > 3:
    status = _train_status(parts[3])
    if status is not None:
      return 4, status
  for family, note in FAMILIES.items():
    if parts[:len(family)] == family and len(parts) > len(family):
      count = len(family) + 1
      if not _exists(parts[:count]):
        return _removed(parts)
      return count, Status(api_status.SUPPORTED, note)
  if (tf1_code and parts[0] in TF1_AMBIGUOUS and len(parts) > 1 and
      _exists(("compat", "v1") + parts[:2])):
    name = ".".join(parts[:2])
    return 2, Status(api_status.TF_REMOVED, (
        f"TF1's tf.{name} is tf.compat.v1.{name} in TensorFlow 2 (tf.{name} "
        "is now the TF2 function of that name). Fix: "
        f"tf.compat.v1.{name}."), f"tf.compat.v1.{name}")
  if parts[:5] in INSTALLED:
    return 5, Status(api_status.SUPPORTED)
  if _exists(parts):
    return None
  return _removed(parts)
