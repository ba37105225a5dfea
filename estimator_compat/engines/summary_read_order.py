"""Orders a step's summary reads of variables before the step's updates.

A TF1 summary of a variable (`tf.compat.v1.summary.scalar('bias', bias[0])`
in the canned linear model_fn) reads it with an op of its own, and nothing in
the graph orders that read and the optimizer's update of the variable when a
`Session.run` fetches both. TF 2.15's executor ran either first: the real
Estimator wrote the value before the step's update on some steps and the
value after it on others, mostly before with a Dataset input, mostly after
with a tiny tensor-input model, and we did the same (differential findings
G16: seed 436 wrote `bias` after the update at 2 of 4 steps under load,
where both real runs wrote it before at all 4).

Both engines make the read come first on every run: each op of the train
step that writes a variable gets, as control inputs, the reads of that
variable that the fetched summaries make. A step's summaries then hold the
values the step computed its loss from, as its loss summary does. A read
that depends on the train step's updates (a summary made under
`tf.control_dependencies([train_op])`) is left as it is: it reads after them
by construction.
"""

from typing import Any, Dict, Iterable, List, Set

import tensorflow as tf

from estimator_compat.engines import graph_ops

_SCOPE = "summary_read_order"
# Ops that read a resource variable themselves (not in a function body).
_PLAIN_READS = frozenset({"ReadVariableOp", "ResourceGather",
                          "ResourceGatherNd", "VariableShape"})
# Ops that write resource variables given as inputs (every resource input).
_WRITES = frozenset({"AssignVariableOp", "AssignAddVariableOp",
                     "AssignSubVariableOp"})
_WRITE_PREFIXES = ("ResourceApply", "ResourceSparseApply", "ResourceScatter")
# Ops that write a summary protocol buffer (TF1 tf.compat.v1.summary.*).
_SUMMARY_TYPES = frozenset({
    "ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummary",
    "AudioSummaryV2", "TensorSummary", "TensorSummaryV2", "MergeSummary"})


def _is_write(op: tf.Operation) -> bool:
  return op.type in _WRITES or op.type.startswith(_WRITE_PREFIXES)


def _ops(fetches: Any) -> List[tf.Operation]:
  found = [getattr(f, "op", f) for f in tf.nest.flatten(fetches)
           if f is not None]
  return [op for op in found if isinstance(op, tf.Operation)]


def summary_ops(fetches: Any) -> List[tf.Operation]:
  """The ops among `fetches` (tensors or ops) that write a TF1 summary."""
  return [op for op in _ops(fetches) if op.type in _SUMMARY_TYPES]


def graph_summaries(graph: tf.Graph, extra: Any = None) -> List[tf.Operation]:
  """The graph's TF1 summaries (the collections merge_all reads) and `extra`.

  Args:
    graph: the train graph.
    extra: a summary op the step may fetch besides them (Scaffold's).
  """
  keys = (tf.compat.v1.GraphKeys.SUMMARIES, tf.compat.v1.GraphKeys.SUMMARY_OP)
  found = [t for key in keys for t in graph.get_collection(key)]
  return summary_ops(found + ([extra] if extra is not None else []))


def _done(read: tf.Operation) -> tf.Operation:
  """An op that runs once `read` has read its variables.

  A plain read is done when it runs. A tf.compat.v1.cond's If op is lowered
  into the graph, and a control edge from it fires before its branch has
  run (measured: the graph engine's summary then read after the update at
  some steps), so its outputs are waited for instead: they come out of the
  branch.
  """
  outputs = [t for t in read.outputs if t.dtype != tf.resource]
  if read.type in _PLAIN_READS or not outputs:
    return read
  name = f"{read.name.replace('/', '_')}_done"
  try:  # made by an earlier call (the function engine's next fetch set)
    return read.graph.get_operation_by_name(f"{_SCOPE}/{name}")
  except KeyError:
    pass
  with read.graph.as_default(), tf.name_scope(_SCOPE):
    return tf.group(*[tf.identity(t) for t in outputs], name=name)


def reads_before_updates(train_fetches: Any, summaries: Iterable[Any]) -> int:
  """Makes the train step's variable writes wait for the summaries' reads.

  Args:
    train_fetches: what each step runs (the train op), in the graph that
      `summaries` are in, before a session finalizes it or a function is
      made from it.
    summaries: the summary ops (or tensors) the step may fetch with it.

  Returns:
    How many control inputs were added.
  """
  step = graph_ops.ancestors(_ops(train_fetches))
  in_step = {op.name for op in step}
  writers: Dict[str, List[tf.Operation]] = {}
  for op in step:
    if _is_write(op):
      for handle in op.inputs:
        if handle.dtype == tf.resource:
          writers.setdefault(handle.name, []).append(op)
  if not writers:
    return 0
  every_writer: Set[str] = {op.name for ops in writers.values() for op in ops}
  ordered = 0
  for read in graph_ops.ancestors(_ops(summaries)):
    # A read takes the variable's handle: a ReadVariableOp, or a
    # tf.compat.v1.cond whose branch reads it (the canned linear model's
    # fraction_of_zero_weights).
    handles = {t.name for t in read.inputs if t.name in writers}
    if not handles or read.name in in_step or _is_write(read):
      continue
    # A read after any of the step's writes stays after them (and ordering
    # it before one would make a cycle).
    if any(op.name in every_writer for op in graph_ops.ancestors([read])):
      continue
    done = _done(read)
    for handle in sorted(handles):
      for writer in writers[handle]:
        if done not in writer.control_inputs:
          writer._add_control_input(done)  # pylint: disable=protected-access
          ordered += 1
  return ordered
