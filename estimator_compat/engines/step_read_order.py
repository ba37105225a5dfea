"""Orders the hooks' global-step read before the train step's increment.

TF1's SummarySaverHook, StepCounterHook and CheckpointSaverHook fetch the
global-step read tensor in the same `Session.run` as the train op and take
the value as the step before that run's increment ("stale" step + 1). Nothing
in the graph orders the read and the increment, so when a step is small (an
input_fn returning tensors, a queue input) the executor sometimes reads after
the increment and the hooks shift their cadence: summaries at [1, 4, 6] or
[1, 3, 5] instead of [1, 4] for 6 steps every 3. The real Estimator did that
on some runs and not others (differential findings G11, G13).

The graph engine makes the read come first on every run: each op of the
train step that writes global_step gets the read as a control input. The
hooks then see the value they assume, which is what the Estimator wrote on
its ordered runs and what the function engine writes.

Two reads are ordered: the one the standard hooks fetch (the global-step
read collection) and the variable's own graph element, which a hook gets
when it fetches `tf.compat.v1.train.get_global_step()` itself (user hooks,
LoggingTensorHook's "step"). A user hook that stopped at `step + 1 == N`
otherwise stopped one step early on some runs.
"""

from typing import Any, List, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.training import training_util

from estimator_compat.engines import graph_ops

# Ops that write a resource variable (its handle is input 0). The engine
# creates global_step (get_or_create_global_step) as a resource variable.
_WRITERS = frozenset({"AssignAddVariableOp", "AssignSubVariableOp",
                      "AssignVariableOp"})


def _step_ops(fetches: Any) -> List[tf.Operation]:
  """Every op a Session.run of `fetches` may run (data and control inputs)."""
  start = [getattr(f, "op", f) for f in tf.nest.flatten(fetches)
           if f is not None]
  return graph_ops.ancestors(op for op in start
                             if isinstance(op, tf.Operation))


def _writes(op: tf.Operation, variable: Any) -> bool:
  handle = getattr(variable, "handle", None)
  return op.type in _WRITERS and handle is not None and bool(op.inputs) and (
      op.inputs[0] is handle)


def _hook_reads(graph: tf.Graph, global_step: Any) -> List[tf.Operation]:
  """The global-step reads hooks fetch: the read collection's, the variable's."""
  reads = []
  read = training_util._get_global_step_read(graph)  # pylint: disable=protected-access
  if read is not None:
    reads.append(read.op)
  element = getattr(global_step, "_graph_element", None)
  op = getattr(element, "op", None)
  if op is not None and op.graph is graph and op not in reads:
    reads.append(op)
  return reads


def read_before_increment(graph: tf.Graph, fetches: Any) -> Optional[int]:
  """Makes each global_step write that `fetches` runs wait for the reads.

  Args:
    graph: the train graph, before its session finalizes it.
    fetches: what each step runs (the train op and the loss).

  Returns:
    How many control inputs were added; None when the graph has no global
    step or no read of it.
  """
  global_step = tf.compat.v1.train.get_global_step(graph)
  if global_step is None:
    return None
  reads = _hook_reads(graph, global_step)
  if not reads:
    return None
  ordered = 0
  for op in _step_ops(fetches):
    if op in reads or not _writes(op, global_step):
      continue
    for read in reads:
      if read not in op.control_inputs:
        op._add_control_input(read)  # pylint: disable=protected-access
        ordered += 1
  return ordered
