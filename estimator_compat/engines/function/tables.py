"""Lookup tables a traced model_fn makes: their own per call, initialized.

Under the Estimator each call had a TF1 Session of its own, so its own
lookup tables, which the default Scaffold's local_init_op initialized
(`tf.compat.v1.tables_initializer()`: the TABLE_INITIALIZERS collection)
after the restore, before the first step. The function engine runs a call
as several functions in one eager context, where a table is found by its
shared name: every function of one trace must find the same table, and no
later call may find it (a TextFileInitializer's table is named after its
file, so a later call would get the table as the file was then).
"""

import contextlib
import functools
import threading
import uuid
from typing import Any, Callable, Iterator, List, Sequence

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.ops import gen_lookup_ops

from estimator_compat.engines.function.fetches import depends_on
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine

# The gen_lookup_ops functions that make (or find, by shared name) a table.
# TensorFlow's table classes call them under init_scope: eagerly, in the
# one eager context the function engine runs every call in.
_MAKERS = ("hash_table", "hash_table_v2", "mutable_hash_table",
           "mutable_hash_table_v2", "mutable_hash_table_of_tensors",
           "mutable_hash_table_of_tensors_v2", "mutable_dense_hash_table",
           "mutable_dense_hash_table_v2")
_installed = {}
_lock = threading.Lock()
_trace = threading.local()  # .suffix: the trace in progress on this thread.


def unique_suffix() -> str:
  """A shared-name suffix no other call's tables have."""
  return f"_estimator_compat_{uuid.uuid4().hex}"


def _own_name(maker: Callable[..., Any]) -> Callable[..., Any]:
  """`maker` with the trace's suffix on the shared name, while one traces."""

  @functools.wraps(maker)
  def make(*args, **kwargs):
    suffix = getattr(_trace, "suffix", None)
    if suffix is not None and (kwargs.get("shared_name") or
                               kwargs.get("use_node_name_sharing")):
      base = kwargs.get("shared_name") or kwargs.get("name") or "table"
      kwargs["shared_name"] = f"{base}{suffix}"
      kwargs["use_node_name_sharing"] = False
    return maker(*args, **kwargs)

  return make


def _install() -> None:
  with _lock:
    if _installed:
      return
    for name in _MAKERS:
      _installed[name] = getattr(gen_lookup_ops, name)
      setattr(gen_lookup_ops, name, _own_name(_installed[name]))


@contextlib.contextmanager
def own_names() -> Iterator[None]:
  """While active (one model_fn trace), its tables get names of their own.

  A table's shared name gets a suffix unique to the trace, so every function
  of the trace finds the same table and no other trace (a later call, or
  another Estimator) finds it. Tables with neither a shared name nor node
  name sharing are unique already.
  """
  _install()
  previous = getattr(_trace, "suffix", None)
  _trace.suffix = unique_suffix()
  try:
    yield
  finally:
    _trace.suffix = previous


def initializers(graph: tf.Graph, input_ops: Sequence[tf.Operation],
                 mode: str) -> List[tf.Operation]:
  """The trace's TABLE_INITIALIZERS, to run once per call before any step.

  Raises:
    NeedsGraphEngine: one reads the input batch (a function would consume
      a batch to run it).
  """
  # (A table made under init_scope was initialized eagerly; its initializer
  # is held as None.)
  found = [op for op in graph.get_collection(
      tf.compat.v1.GraphKeys.TABLE_INITIALIZERS) if op is not None]
  needed = depends_on(found, input_ops)
  if needed is not None:
    raise NeedsGraphEngine(
        f"The model_fn ({mode}) initializes a lookup table from the input "
        f"batch ({needed.name}); a TF1 Session's local_init_op ran it before "
        f"the first step. {GRAPH_ENGINE_FIX}")
  return found
