"""Tensors an input_fn returns, fed step by step as the Estimator's session did.

Many legacy input_fns return tensors rather than a Dataset, most often
`tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()`. Called
eagerly, those tensors hold the first batch only; under the Estimator every
`Session.run` evaluated them again, so each step got the next batch and the
end of the input (OutOfRangeError) ended training, evaluation or prediction.

This module builds input_fn again in a private graph, as the Estimator did
(graph seed, then global_step, then input_fn, so that op seeds match), and
looks at what the returned tensors depend on:

* nothing stateful (constants and pure functions of them): every step sees
  the same value, so repeating one value is exact (`CONSTANT`);
* stateful ops a Session can run without the user's help (a one-shot
  iterator, random ops, py_func, lookup tables, local variables): a private
  Session over that graph evaluates them once per step, streamed as a
  Dataset that ends where the Session raised OutOfRangeError (`STREAM`);
* anything only the user's own session work can provide (a placeholder, an
  initializable iterator whose initializer a hook or scaffold runs, a queue
  filled by queue runners, a global variable restored from the checkpoint):
  `NeedsGraphEngine`, raised while the call is being set up.
"""

import collections
import dataclasses
import hashlib
import threading
from typing import Any, Callable, List, Optional, Set, Tuple

import numpy as np
import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.data.ops import dataset_ops
from tensorflow.python.framework import op_def_registry
from tensorflow.python.training import training_util

from estimator_compat.engines import graph_ops
from estimator_compat.engines.function import op_seeds
from estimator_compat.engines.function import tables
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine
from estimator_compat.mode_keys import ModeKeys

CONSTANT = "constant"
STREAM = "stream"

_PLACEHOLDERS = ("Placeholder", "PlaceholderV2", "PlaceholderWithDefault")
_VARIABLES = ("VarHandleOp", "VariableV2", "Variable")
_INITIALIZABLE_ITERATORS = ("Iterator", "IteratorV2")
_HANDLE_ITERATORS = ("IteratorFromStringHandle", "IteratorFromStringHandleV2",
                     "MultiDeviceIterator",
                     "MultiDeviceIteratorFromStringHandle")
_MAKE_ITERATOR = "MakeIterator"


@dataclasses.dataclass(frozen=True)
class InputGraph:
  """input_fn built in a private graph.

  Attributes:
    graph: the graph, with the Estimator's seed and global_step.
    element: what input_fn returned: a tensor, a dict of them, or a
      (features, labels) tuple, leaves converted to tensors of `graph` (or
      what `build`'s `element_of` made of it).
    init_ops: what the Estimator's default Scaffold ran before the first
      step for these tensors (local variables, lookup tables).
    op_seeds: the unseeded op-seed requests input_fn made in the graph
      (the model_fn's numbering went on from there; op_seeds.py).
  """
  graph: tf.Graph
  element: Any
  init_ops: List[tf.Operation]
  op_seeds: int = 0


def normalize(result: Any, where: str, allowed: str) -> Any:
  """A (features, labels) tuple, a dict or a tensor; else TypeError.

  `(features, None)` becomes `features`: the model_fn gets labels None.
  """
  if isinstance(result, (tuple, list)) and len(result) == 2:
    return tuple(result) if result[1] is not None else result[0]
  if isinstance(result, (dict, np.ndarray)) or tf.is_tensor(result):
    return result
  raise TypeError(
      f"{where} returned {type(result).__name__} ({str(result)[:60]!r}); it "
      f"must return {allowed}. Fix: return e.g. "
      "tf.data.Dataset.from_tensor_slices((features, labels)).batch(32).")


def as_tensors(element: Any) -> Any:
  """`element` with its leaves made tensors of the default graph."""
  return tf.nest.map_structure(
      lambda leaf: leaf if tf.is_tensor(leaf) else tf.convert_to_tensor(leaf),
      element)


def build(tf_random_seed: Optional[int], mode: str,
          call_input_fn: Callable[[], Any], where: str,
          allowed: str,
          element_of: Callable[[Any], Any] = as_tensors,
          datasets: bool = False) -> InputGraph:
  """Calls input_fn in a fresh graph set up as the Estimator's was.

  Args:
    tf_random_seed: the RunConfig's graph seed.
    mode: a ModeKeys value (TRAIN also creates the global-step read tensor
      before input_fn, as the Estimator did: it shifts op seeds).
    call_input_fn: calls the user's input_fn with its arguments.
    where: the input_fn's name, for errors.
    allowed: what input_fn may return, for errors.
    element_of: makes the normalized result the element of tensors that
      is evaluated at each step (default: every leaf made a tensor).
    datasets: a Dataset is kept as the element (for `eager_dataset`).

  Raises:
    NeedsGraphEngine: in a graph, input_fn returns a Dataset and `datasets`
      is False (it returned tensors eagerly), so what the Estimator fed
      cannot be told.
  """
  graph = tf.Graph()
  with graph.as_default():
    tf.compat.v1.set_random_seed(tf_random_seed)
    tf.compat.v1.train.get_or_create_global_step()
    if mode == ModeKeys.TRAIN:
      training_util._get_or_create_global_step_read(graph)  # pylint: disable=protected-access
    result = call_input_fn()
    if isinstance(result, tf.data.Dataset) and datasets:
      return InputGraph(graph, result, [tf.compat.v1.tables_initializer()],
                        op_seeds.requested_in(graph))
    if isinstance(result, tf.data.Dataset):
      raise NeedsGraphEngine(
          f"{where} returns tensors when called eagerly but a Dataset in a "
          "TF1 graph; what it fed under the Estimator needs that TF1 graph "
          f"and Session. {GRAPH_ENGINE_FIX}")
    element = element_of(normalize(result, where, allowed))
    init_ops = [tf.compat.v1.local_variables_initializer(),
                tf.compat.v1.tables_initializer()]
  return InputGraph(graph, element, init_ops, op_seeds.requested_in(graph))


def _flat(element: Any) -> List[tf.Tensor]:
  return tf.nest.flatten(element, expand_composites=True)


def _ancestors(tensors: List[tf.Tensor]) -> List[tf.Operation]:
  return graph_ops.ancestors(t.op for t in tensors)


def _is_stateful(op: tf.Operation) -> bool:
  try:
    return bool(op.op_def.is_stateful)
  except (KeyError, ValueError, AttributeError):
    return True  # A graph function or unknown op: assume state.


def _initialized_by_default(iterator_op: tf.Operation,
                            table_init: Set[str]) -> bool:
  """Whether a MakeIterator of this iterator is among the table initializers.

  (A known recipe: adding `iterator.initializer` to TABLE_INITIALIZERS makes
  the Estimator's default Scaffold run it.)
  """
  return any(consumer.type == _MAKE_ITERATOR and consumer.name in table_init
             for consumer in iterator_op.outputs[0].consumers())


def _needs_session(op: tf.Operation, local: Set[str],
                   table_init: Set[str]) -> Optional[str]:
  """Why this op's value needs the user's TF1 Session work, or None."""
  if op.type in _PLACEHOLDERS:
    return (f"read the placeholder {op.name!r}, which only a feed_dict given "
            "to a TF1 Session.run can fill")
  if op.type in _VARIABLES and op.name not in local:
    return (f"read the variable {op.name!r}, whose value lives in the TF1 "
            "Session (initialized or restored from the checkpoint)")
  if op.type in _INITIALIZABLE_ITERATORS and not _initialized_by_default(
      op, table_init):
    return (f"read the initializable iterator {op.name!r} "
            "(make_initializable_iterator or Iterator.from_structure), whose "
            "initializer your hook or scaffold runs in a TF1 Session")
  if op.type in _HANDLE_ITERATORS:
    return (f"read the iterator {op.name!r} ({op.type}), which a TF1 "
            "Session feeds or initializes")
  if "Queue" in op.type or op.type.endswith(("Reader", "ReaderV2")):
    return (f"read the queue or reader {op.name!r} ({op.type}), which queue "
            "runners fill from threads of a TF1 Session")
  return None


def classify(input_graph: InputGraph, where: str) -> str:
  """CONSTANT or STREAM (see the module docstring).

  Raises:
    NeedsGraphEngine: the tensors need the user's TF1 Session work.
  """
  graph = input_graph.graph
  with graph.as_default():
    local = {v.op.name for v in tf.compat.v1.local_variables()}
    table_init = {op.name for op in graph.get_collection(
        tf.compat.v1.GraphKeys.TABLE_INITIALIZERS)}
  stateful = False
  for op in _ancestors(_flat(input_graph.element)):
    reason = _needs_session(op, local, table_init)
    if reason:
      raise NeedsGraphEngine(
          f"{where} returns tensors that {reason}; the function engine has "
          f"no TF1 Session to do that. {GRAPH_ENGINE_FIX}")
    stateful = stateful or _is_stateful(op)
  return STREAM if stateful else CONSTANT


def _session_config() -> tf.compat.v1.ConfigProto:
  # The input was built on the CPU; the private Session takes no GPU.
  return tf.compat.v1.ConfigProto(device_count={"GPU": 0},
                                  allow_soft_placement=True)


def stream(input_graph: InputGraph) -> tf.data.Dataset:
  """A Dataset of the tensors' values at successive Session.run calls.

  Each iterator of the Dataset opens its own Session over the private graph
  (the state of a fresh Session: a new pass over the input), runs the
  initializers the Estimator's default Scaffold ran, then evaluates the
  tensors once per element until OutOfRangeError, which ends the Dataset.
  The Session closes at the end of the input or when the iterator is
  deleted.
  """
  graph, element = input_graph.graph, input_graph.element
  flat = _flat(element)
  specs = tuple(tf.TensorSpec(t.shape, t.dtype) for t in flat)
  structure = tf.nest.map_structure(tf.type_spec_from_value, element)
  init_ops = input_graph.init_ops

  def values():
    # Closed directly, not by `with Session()`: its __exit__ closes from a
    # new thread, which never starts when the interpreter's exit is what
    # finalizes an unfinished generator (the program hung at exit).
    sess = tf.compat.v1.Session(graph=graph, config=_session_config())
    try:
      sess.run(init_ops)
      while True:
        try:
          batch = sess.run(flat)
        except tf.errors.OutOfRangeError:
          return
        yield tuple(batch)
    finally:
      sess.close()

  def pack(*parts):
    return tf.nest.pack_sequence_as(structure, list(parts),
                                    expand_composites=True)

  return tf.data.Dataset.from_generator(
      values, output_signature=specs).map(pack)


def constant(input_graph: InputGraph) -> tf.data.Dataset:
  """The tensors' one value (CONSTANT), repeated as a Session evaluated it."""
  flat = _flat(input_graph.element)
  structure = tf.nest.map_structure(tf.type_spec_from_value,
                                    input_graph.element)
  with tf.compat.v1.Session(graph=input_graph.graph,
                            config=_session_config()) as sess:
    sess.run(input_graph.init_ops)
    values = sess.run(flat)
  value = tf.nest.pack_sequence_as(
      structure, [tf.constant(v) for v in values], expand_composites=True)
  return tf.data.Dataset.from_tensors(value).repeat()


def check_dataset(input_graph: InputGraph, where: str) -> None:
  """Raises NeedsGraphEngine if the Dataset reads what a Session feeds."""
  graph = input_graph.graph
  with graph.as_default():
    local = {v.op.name for v in tf.compat.v1.local_variables()}
  table_init = {op.name for op in graph.get_collection(
      tf.compat.v1.GraphKeys.TABLE_INITIALIZERS)}
  for op in _ancestors([input_graph.element._variant_tensor]):  # pylint: disable=protected-access
    reason = _needs_session(op, local, table_init)
    if reason:
      raise NeedsGraphEngine(
          f"{where} returns a Dataset that {reason}; the function engine "
          f"has no TF1 Session to do that. {GRAPH_ENGINE_FIX}")


# Functions that import an input_fn's Dataset, by the subgraph they import
# (its serialized GraphDef's digest). A later call whose input_fn built the
# very same subgraph (constants, seeds and all) reuses the function, which
# builds a fresh Dataset on each call: what importing again would give,
# without the import (a quarter of a small predict() call's time). Only
# subgraphs without kept state are reused (`_reusable`): a stateful kernel
# (a seeded random op in a map function, a lookup table, a variable) keeps
# its state between calls of one function, where the Estimator started
# each call from a new graph. Subgraphs with py_func or from_generator never
# match: their registration tokens differ per build.
_IMPORTED: "collections.OrderedDict[bytes, Tuple[tf.Graph, Any]]" = (
    collections.OrderedDict())
_IMPORTED_MAX = 8
_IMPORTED_LOCK = threading.Lock()

# The same imports, also found by the whole input graph they came from: the
# same whole graph holds the same subgraph, so a later call that built it
# finds the import without extracting and serializing the subgraph again
# (for a Dataset of numpy arrays, copies of every array). The whole graph is
# compared byte for byte with the kept ones (exact, and a tenth of a digest
# of the program's constants); the newest few are kept, up to _WHOLE_BYTES
# together (the newest always).
_WHOLE: "collections.deque[Tuple[bytes, bytes, Tuple[tf.Graph, Any]]]" = (
    collections.deque())
_WHOLE_MAX = 4
_WHOLE_BYTES = 256 << 20


def _kept_whole(names: bytes, serialized: bytes
               ) -> Optional[Tuple[tf.Graph, Any]]:
  """The import kept for this very whole graph (now the newest), or None."""
  with _IMPORTED_LOCK:
    for entry in _WHOLE:
      if entry[0] == names and entry[1] == serialized:
        _WHOLE.remove(entry)
        _WHOLE.append(entry)
        return entry[2]
  return None


def _keep_whole(names: bytes, serialized: bytes,
                kept: Tuple[tf.Graph, Any]) -> None:
  with _IMPORTED_LOCK:
    _WHOLE.append((names, serialized, kept))
    while len(_WHOLE) > 1 and (
        len(_WHOLE) > _WHOLE_MAX or
        sum(len(entry[1]) for entry in _WHOLE) > _WHOLE_BYTES):
      _WHOLE.popleft()


def _after_initializers(graph: tf.Graph, init_ops: List[Any]) -> None:
  """Makes every imported op that reads what `init_ops` set up run after it.

  A Session ran the Scaffold's initializers before the first step; in one
  function call nothing orders a table lookup that feeds the Dataset (e.g.
  `Dataset.from_tensors(table.lookup(...))`) after the table's initializer.
  Each op outside the initializers' own inputs gets them as control inputs.
  """
  if not init_ops:
    return
  before = set()
  stack = list(init_ops)
  while stack:
    op = stack.pop()
    if op in before:
      continue
    before.add(op)
    stack.extend(t.op for t in op.inputs)
    stack.extend(op.control_inputs)
  for op in graph.get_operations():
    if op not in before:
      op._add_control_inputs(init_ops)  # pylint: disable=protected-access


_TABLE_OPS = ("HashTable", "HashTableV2", "MutableHashTable",
              "MutableHashTableV2", "MutableHashTableOfTensors",
              "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
              "MutableDenseHashTableV2")


def _own_tables(graph_def: Any) -> None:
  """Gives the lookup tables of `graph_def` shared names of this import.

  In one eager context a table is found by its shared name (or node name):
  a later call would find this call's table, initialized from its vocabulary
  file as it was then. Under the Estimator each call had a Session, so
  tables, of its own (as tables.py does for a model_fn's tables).
  """
  suffix = tables.unique_suffix()
  for node in graph_def.node:
    if node.op in _TABLE_OPS:
      shared = node.attr["shared_name"].s.decode() or node.name
      node.attr["shared_name"].s = (shared + suffix).encode()
      node.attr["use_node_name_sharing"].b = False


def _called_functions(nodes: List[Any]) -> Set[str]:
  """Names of the functions `nodes` call: as their op, or in an attr."""
  names = set()
  for node in nodes:
    names.add(node.op)
    for value in node.attr.values():
      if value.HasField("func"):
        names.add(value.func.name)
      names.update(f.name for f in value.list.func)
  return names


def _called_library(graph_def: Any) -> Any:
  """`graph_def` with only the library functions its nodes call (a copy).

  A subgraph extracted from the input_fn's graph keeps that graph's whole
  function library; in TRAIN it holds the branches of the global-step read's
  cond (a ReadVariableOp, named with a process-wide counter) that no Dataset
  op calls and that never run.
  """
  functions = {f.signature.name: f for f in graph_def.library.function}
  called: List[Any] = []
  pending, seen = _called_functions(list(graph_def.node)), set()
  while pending:
    name = pending.pop()
    if name in seen or name not in functions:
      continue
    seen.add(name)
    called.append(name)
    pending |= _called_functions(list(functions[name].node_def))
  trimmed = tf.compat.v1.GraphDef()
  trimmed.versions.CopyFrom(graph_def.versions)
  trimmed.node.extend(graph_def.node)
  trimmed.library.function.extend(functions[name] for name in sorted(called))
  trimmed.library.gradient.extend(
      g for g in graph_def.library.gradient if g.function_name in seen)
  return trimmed


def _reusable(graph_def: Any) -> bool:
  """True if no op of `graph_def` (or its functions) keeps kernel state.

  Dataset ops are stateful by their op definition, but their state lives in
  the Dataset and its iterators, which each call of the function makes anew.
  """
  nodes = list(graph_def.node)
  for function in graph_def.library.function:
    nodes.extend(function.node_def)
  for node in nodes:
    op_def = op_def_registry.get(node.op)
    if op_def is None or (op_def.is_stateful and "Dataset" not in node.op):
      return False
  return True


def _digest(serialized: bytes, names: bytes) -> bytes:
  digest = hashlib.sha256(serialized)
  digest.update(names)  # (Not concatenated: no copy of `serialized`.)
  return digest.digest()


def _kept(key: bytes) -> Optional[Tuple[tf.Graph, Any]]:
  """The import kept under `key` (now the most recently used), or None."""
  with _IMPORTED_LOCK:
    kept = _IMPORTED.get(key)
    if kept is not None:
      _IMPORTED.move_to_end(key)
  return kept


def eager_dataset(input_graph: InputGraph) -> tf.data.Dataset:
  """The Dataset input_fn built in the graph, as an eager Dataset.

  The ops that make the Dataset (and the lookup tables it reads, with their
  initializers) are imported into a function, whose call gives the Dataset
  eagerly: its ops keep the seeds the graph gave them (the Estimator's), and
  input_fn is not called again. The graph is kept alive with the Dataset,
  as the Python functions of `from_generator` and `py_func` are registered
  with it.
  """
  dataset = input_graph.element
  variant = dataset._variant_tensor  # pylint: disable=protected-access
  init_names = [op.name for op in input_graph.init_ops]
  names = repr([variant.name] + init_names).encode()
  whole = input_graph.graph.as_graph_def()
  serialized, kept = None, None
  # A TRAIN graph's global-step read is a cond whose branch functions are
  # named from a process-wide counter: its whole graph never comes back,
  # so only its sub-graph is looked up (no whole graph kept for nothing).
  if not input_graph.graph.get_collection(training_util.GLOBAL_STEP_READ_KEY):
    serialized = whole.SerializeToString(deterministic=True)
    kept = _kept_whole(names, serialized)
  if kept is None:
    graph_def = tf.compat.v1.graph_util.extract_sub_graph(
        whole, [variant.op.name] + init_names)
    _own_tables(graph_def)
    key = None
    # Judged and keyed without the library functions nothing calls (the
    # import itself keeps them, as before).
    called = _called_library(graph_def)
    if _reusable(called):
      key = _digest(called.SerializeToString(deterministic=True), names)
      kept = _kept(key)
    if kept is None:

      def imported():
        elements = tf.compat.v1.import_graph_def(
            graph_def, name="", return_elements=[variant.name] + init_names)
        _after_initializers(tf.compat.v1.get_default_graph(), elements[1:])
        with tf.control_dependencies(elements[1:]):
          return tf.identity(elements[0])

      kept = (input_graph.graph, tf.compat.v1.wrap_function(imported, []))
    if key:
      with _IMPORTED_LOCK:
        _IMPORTED[key] = kept
        while len(_IMPORTED) > _IMPORTED_MAX:
          _IMPORTED.popitem(last=False)
      if serialized is not None:
        _keep_whole(names, serialized, kept)
  eager = dataset_ops._VariantDataset(kept[1](), dataset.element_spec)  # pylint: disable=protected-access
  eager._estimator_compat_keep = (input_graph.graph, kept)  # pylint: disable=protected-access
  return eager
