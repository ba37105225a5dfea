"""Which parts of an EstimatorSpec's Scaffold the function engine honours.

A TF1 `Scaffold` tells `MonitoredSession` how to build, initialize, check,
save and restore a model in a Session. The function engine has no Session:
its variables are initialized when they are created, and it saves and
restores every variable by its legacy name itself. So it honours a Scaffold
exactly only where the Scaffold asks for what it does anyway:

- every field left at its default (None), and
- `summary_op`: the op the chief's summary hook writes; the function engine
  writes it as it writes the default (docs/decisions.md).

Any other field set (or put in the graph collection that Scaffold.finalize()
would read in its place) needs a TF1 Session: `check()` raises
NeedsGraphEngine from inside the model_fn's trace, before any step runs or
file is written, so that the default engine runs the call on the graph
engine.
"""

from typing import Any, Optional

import tensorflow as tf

from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine

_keys = tf.compat.v1.GraphKeys

# (Scaffold field, graph collection read in its place, what it does that
# needs a Session.)
_SESSION_FIELDS = (
    ("saver", _keys.SAVERS,
     "a custom Saver or tf.train.Checkpoint decides what is saved and "
     "restored, and how"),
    ("init_op", _keys.INIT_OP, "a custom op initializes the variables"),
    ("init_feed_dict", None, "feeds the init_op"),
    ("init_fn", None, "a function gets the Session after initialization"),
    ("ready_op", _keys.READY_OP, "a custom op checks the model is ready"),
    ("ready_for_local_init_op", _keys.READY_FOR_LOCAL_INIT_OP,
     "a custom op checks the model is ready for local_init_op"),
    ("local_init_op", _keys.LOCAL_INIT_OP,
     "a custom op runs after each restore or initialization"),
    ("local_init_feed_dict", None, "feeds the local_init_op"),
)


def _field_value(scaffold: tf.compat.v1.train.Scaffold, field: str) -> Any:
  if field == "init_fn":  # The property wraps the user's function.
    return scaffold.init_fn
  return getattr(scaffold, field, None)


def check(scaffold: tf.compat.v1.train.Scaffold, call: str) -> None:
  """Raises NeedsGraphEngine if the Scaffold asks for a TF1 Session.

  Call it inside the model_fn's trace (graph collections are read from the
  default graph), before any hook's begin().

  Args:
    scaffold: the EstimatorSpec's Scaffold.
    call: "train", "evaluate" or "predict", for the message.

  Raises:
    NeedsGraphEngine: a field (or its collection) the function engine
      cannot honour exactly.
  """
  graph = tf.compat.v1.get_default_graph()
  for field, collection, what in _SESSION_FIELDS:
    if _field_value(scaffold, field) is not None:
      source = f"Scaffold.{field}"
    elif collection is not None and graph.get_collection(collection):
      source = f"Scaffold's {field} (from the {collection!r} collection)"
    else:
      continue
    raise NeedsGraphEngine(
        f"{source} needs a TF1 Session ({what}) in {call}(). "
        f"{GRAPH_ENGINE_FIX}")


def summary_op(scaffold: tf.compat.v1.train.Scaffold) -> Optional[Any]:
  """The op the chief's summary hook writes, as Scaffold.finalize() picks it.

  Scaffold.summary_op if set, else the SUMMARY_OP collection's single item,
  else every summary merged (None when there is none).
  """
  if scaffold.summary_op is not None:
    return scaffold.summary_op
  chosen = tf.compat.v1.get_collection(_keys.SUMMARY_OP)
  if len(chosen) > 1:
    raise RuntimeError(
        f"More than one item in the {_keys.SUMMARY_OP!r} collection. Fix: "
        "pass the one to write as Scaffold(summary_op=...).")
  return chosen[0] if chosen else tf.compat.v1.summary.merge_all()
