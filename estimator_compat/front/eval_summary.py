"""evaluate()'s results as the Summary proto the Estimator wrote for them.

Numbers become scalar summaries; a serialized `Summary` (what
`tf.compat.v1.summary.image` and other summary ops return as a metric value)
has its values retagged `<key>/<i>`; other arrays become tensor summaries.
"""

from typing import Any, Dict

import numpy as np
import tensorflow as tf
from google.protobuf import message

from estimator_compat.front import tf_logging as logging

_v1 = tf.compat.v1


def _add(summary: Any, key: str, value: Any) -> None:
  """Adds one result to `summary`, or logs why it is skipped."""
  if isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)):
    summary.value.add(tag=key, simple_value=float(value))
  elif isinstance(value, np.ndarray) and value.ndim == 0:
    # A Session returned numpy scalars; an eager read gives a 0-d array.
    if value.dtype.kind in "biuf":
      summary.value.add(tag=key, simple_value=float(value))
    else:
      _add(summary, key, value.item())
  elif isinstance(value, bytes):
    try:
      parsed = _v1.Summary.FromString(value)
    except message.DecodeError:
      logging.warning(
          "Skipping summary for %s, cannot parse string to Summary.", key)
      return
    for i, item in enumerate(parsed.value):
      item.tag = "%s/%d" % (key, i)
    summary.value.extend(parsed.value)
  elif isinstance(value, np.ndarray):
    item = summary.value.add(tag=key, node_name=key)
    item.tensor.CopyFrom(tf.make_tensor_proto(value))
    logging.info(
        "Summary for np.ndarray is not visible in Tensorboard by default. "
        "Consider using a Tensorboard plugin for visualization.")
  else:
    logging.warning(
        "Skipping summary for %s, must be a float, np.float32, np.int64, "
        "np.int32 or int or np.ndarray or a serialized string of Summary "
        "(got %s).", key, type(value).__name__)


def summary_of(results: Dict[str, Any]) -> Any:
  """A tf.compat.v1.Summary of `results` (global_step and None left out)."""
  summary = _v1.Summary()
  for key, value in sorted(results.items()):
    if key == "global_step" or value is None:
      continue
    _add(summary, key, value)
  return summary


def checkpoint_path_summary(checkpoint_path: str) -> Any:
  """The Summary that records which checkpoint was evaluated."""
  summary = _v1.Summary()
  summary.value.add(
      tag="checkpoint_path",
      tensor=tf.make_tensor_proto(checkpoint_path, dtype=tf.string))
  return summary
