"""predict()'s warning about an input that never ends, as the Estimator's.

predict() reads its input until the input ends. Tensors that come neither
from a tf.data iterator nor from queues filled by queue runners (constants,
for instance) never end, so predict() would yield forever.
"""

from typing import Any

import tensorflow as tf

from estimator_compat.front import tf_logging as logging


def _reads_dataset_or_queue(features: Any, graph: tf.Graph) -> bool:
  """Whether `features` come from a Dataset iterator or `graph` has queues.

  As the Estimator: only the top-level tensors are looked at.
  """
  tensors = [t for t in tf.nest.flatten(features) if isinstance(t, tf.Tensor)]
  if any(t.op.type == "IteratorGetNext" for t in tensors):
    return True
  return bool(graph.get_collection(tf.compat.v1.GraphKeys.QUEUE_RUNNERS))


def warn_if_endless(features: Any, graph: tf.Graph) -> None:
  """Logs the Estimator's warning when predict()'s input has no end.

  Args:
    features: the features input_fn returned (graph tensors).
    graph: the graph input_fn was called in.
  """
  if not _reads_dataset_or_queue(features, graph):
    logging.warning(
        "Input graph does not use tf.data.Dataset or contain a QueueRunner. "
        "That means predict yields forever. This is probably a mistake. "
        "Fix: return a tf.data.Dataset (or tensors from its iterator) from "
        "the input_fn, so that predict() stops where the data ends.")
