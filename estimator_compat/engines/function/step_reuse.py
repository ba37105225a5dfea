"""Step functions kept from one train()/evaluate()/predict() call for the next.

Every call still calls input_fn and model_fn (their side effects are the
user's) and traces the model_fn anew, and its hooks' begin() runs in that
trace. When that trace is the very same graph
as an earlier call's (the digest of its GraphDef, the names it fetches and
its captures), the earlier call's pruned step functions and loops compute
exactly what pruning and tracing them again would; this module keeps them
between calls and binds them to the new call's captures (its variables and
its input iterator), so a later call skips pruning and loop tracing. A training trace's steps
are keyed by the same digest: its optimizer's slot variables and the global
step are variables of the new trace, the tensors and summaries its hooks
fetch are in the digested graph and name the kept functions, and a step
function that fetches summaries was pruned after their reads were ordered
before the step's updates (summary_read_order.py) in the call that made it.

Only for graphs whose every stateful op keeps its state in what the call
binds anew (variables, the iterator; random_streams.py's counters are
variables of the new trace, so streams restart as with a new Session):
a kernel-state op (a stateful random op, a lookup table, a summary writer)
would carry its state from one call into the next, so such graphs, graphs
under a strategy and graphs with call-time captures are never kept.
"""

import hashlib
import threading
from typing import Any, Dict, List, Optional, Tuple

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.framework import op_def_registry

# Stateful ops whose state lives in a resource the call binds anew
# (variables, the input iterator) or that only act in order.
_BOUND_STATE_OPS = frozenset([
    "ReadVariableOp", "VarHandleOp", "VariableShape", "VarIsInitializedOp",
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional",
    "PrintV2", "Print", "Assert", "StatefulPartitionedCall",
    "PartitionedCall"])

_KEPT_MAX = 8  # Graphs kept (each entry holds its functions).
_KEPT: Dict[bytes, "KeptSteps"] = {}
_KEPT_LOCK = threading.Lock()


def _bound_state_only(graph_def: Any) -> bool:
  nodes = list(graph_def.node)
  for function in graph_def.library.function:
    nodes.extend(function.node_def)
  for node in nodes:
    op_def = op_def_registry.get(node.op)
    if op_def is None:
      return False
    if op_def.is_stateful and node.op not in _BOUND_STATE_OPS and not (
        node.op.startswith("Resource")):
      return False
  return True


def digest(graph: tf.Graph, mode: str, names: List[str]) -> Optional[bytes]:
  """The key of a model trace whose steps may be kept, or None.

  Args:
    graph: the traced model graph.
    mode: the ModeKeys value.
    names: the names of what the steps fetch (in a fixed order).
  """
  if graph.deferred_external_captures:
    return None
  graph_def = graph.as_graph_def()
  if not _bound_state_only(graph_def):
    return None
  key = hashlib.sha256(graph_def.SerializeToString(deterministic=True))
  key.update(mode.encode())
  key.update("\0".join(names).encode())
  for external, internal in graph.captures:
    key.update(f"\0{internal.name}:{external.dtype.name}".encode())
  return key.digest()


def _traced_once(function: Any) -> Optional[Any]:
  """The concrete function to keep of `function`, or None.

  A loop (a tf.function) is kept as the one concrete function it traced: it
  is never traced again (a trace would run the old call's Python).
  """
  if hasattr(function, "_list_all_concrete_functions"):
    concrete = function._list_all_concrete_functions()  # pylint: disable=protected-access
    return concrete[0] if len(concrete) == 1 else None
  return function


class KeptSteps:
  """One trace's step functions, unbound from the call that made them.

  Args:
    functions: the TracedModel's function tables, as `take` returns them.
    externals: the trace's external captures, in the graph's order.
    own: the loops' own helper variables (reset at each loop call).
  """

  def __init__(self, functions: Dict[str, Any], externals: List[Any],
               own: List[tf.Variable]):
    positions = {id(t): i for i, t in enumerate(externals)}
    own_handles = {id(v.handle) for v in own}
    self.functions: Dict[str, Any] = {}
    # (concrete function, per capture: an external's position or the loop's
    # own variable handle).
    self._bindings: List[Tuple[Any, List[Any]]] = []
    for table, entries in functions.items():
      kept = {}
      for key, entry in entries.items():
        function = entry[0] if isinstance(entry, tuple) else entry
        if function is None or function is False:
          continue
        concrete = _traced_once(function)
        slots = self._bind(concrete, positions, own_handles)
        if slots is not None:
          kept[key] = ((concrete,) + entry[1:] if isinstance(entry, tuple)
                       else concrete)
          self._bindings.append((concrete, slots))
      self.functions[table] = kept
    self.before_end: Optional[Tuple[tf.Variable, tf.Variable]] = None
    self.own: List[tf.Variable] = list(own)

  @staticmethod
  def _bind(concrete: Any, positions: Dict[int, int],
            own_handles: set) -> Optional[List[Any]]:
    """Per capture of `concrete`: an external's position or a loop's own
    variable handle; None if it captured anything else of the old call."""
    captures = getattr(concrete, "_captured_inputs", None)
    if captures is None:
      return None
    slots = []
    for capture in captures:
      if callable(capture):
        return None
      if id(capture) in positions:
        slots.append(positions[id(capture)])
      elif id(capture) in own_handles:
        slots.append(capture)
      else:
        return None
    return slots

  def unbind(self) -> None:
    """Drops the references to the call's captures (its iterator)."""
    for concrete, _ in self._bindings:
      concrete.set_external_captures([])

  def bind(self, externals: List[Any]) -> None:
    """Binds every kept function to a new call's captures."""
    for concrete, slots in self._bindings:
      concrete.set_external_captures(
          [externals[s] if isinstance(s, int) else s for s in slots])


def take(key: Optional[bytes]) -> Optional[KeptSteps]:
  """The steps kept under `key`, now owned by the caller (or None)."""
  if key is None:
    return None
  with _KEPT_LOCK:
    return _KEPT.pop(key, None)


def keep(key: bytes, steps: KeptSteps) -> None:
  """Keeps `steps` (unbound) under `key` for a later call."""
  with _KEPT_LOCK:
    _KEPT.pop(key, None)
    _KEPT[key] = steps
    while len(_KEPT) > _KEPT_MAX:
      del _KEPT[next(iter(_KEPT))]
