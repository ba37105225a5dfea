"""graph.pbtxt as TensorFlow's `tf.io.write_graph` writes it, formatted once.

Each train() call writes its traced graph as text to `graph.pbtxt`, as the
Estimator's CheckpointSaverHook did. Formatting that text is most of the
write (about 0.02 s for benchmarks/mlp_model.py, a call's largest cost of
ours after the input and the trace), and a program that calls train() again
traces the very same graph. So the text TensorFlow made for the last GraphDef
is kept, and written again, byte for byte, when the same GraphDef comes back.

The text comes from `tf.io.write_graph` itself, run into TensorFlow's
in-memory file system, so each TensorFlow version's own formatting is what
lands in the model_dir, and nothing but this call writes the model_dir's
file.
"""

import os
import threading
import uuid
from typing import Any, Optional, Tuple

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.lib.io import file_io

_LOCK = threading.Lock()
# (the GraphDef, serialized deterministically; the text write_graph made).
_last: Optional[Tuple[bytes, bytes]] = None


def _text_of(graph_def: Any) -> bytes:
  """The bytes `tf.io.write_graph(graph_def, ..., as_text=True)` writes."""
  scratch = f"ram://estimator_compat_graph_text/{uuid.uuid4().hex}"
  try:
    path = tf.io.write_graph(graph_def, scratch, "graph.pbtxt")
    return file_io.read_file_to_string(path, binary_mode=True)
  finally:
    file_io.delete_recursively(scratch)


def write_graph_text(graph_def: Any, model_dir: str,
                     name: str = "graph.pbtxt") -> str:
  """Writes `graph_def` as text to `model_dir/name`, as tf.io.write_graph.

  Returns:
    The path written.
  """
  global _last
  key = graph_def.SerializeToString(deterministic=True)
  with _LOCK:
    last = _last
  if last is not None and last[0] == key:
    text = last[1]
  else:
    text = _text_of(graph_def)
    with _LOCK:
      _last = (key, text)
  if not model_dir.startswith("gs:"):  # As write_graph: no directories there.
    file_io.recursive_create_dir(model_dir)
  path = os.path.join(model_dir, name)
  file_io.atomic_write_string_to_file(path, text)
  return path
