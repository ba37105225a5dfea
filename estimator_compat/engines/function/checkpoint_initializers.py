"""`tf.compat.v1.train.init_from_checkpoint` called inside model_fn.

In a TF1 graph, init_from_checkpoint replaces a variable's initializer with
a read of the checkpoint's tensor: the variable starts from that value
whenever it is initialized, that is when no checkpoint of the model_dir (or
`checkpoint_path`) is restored; a restored variable keeps the restored value,
and a `warm_start_from` applied after model_fn overrides it. (Fine-tuning
programs such as BERT's run_classifier rely on it.)

On the function engine the variables are made eagerly before model_fn
returns, and the call only leaves its graph ops in the trace (a `RestoreV2`
as the variable's `_initial_value`, an assign as its `_initializer_op`),
which no step runs. This module finds those requests after the trace and
runs the same read eagerly where TF1 would have run the initializer. What it
cannot honour exactly (a local variable, which TF1 initialized on every
call; a parameter server's sharded or aggregating variable) sends the call
to the graph engine while it is still being set up.
"""

from typing import Any, Iterable, List, NamedTuple, Optional, Set

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.distribute import values as values_lib
from tensorflow.python.ops import resource_variable_ops

from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine


class _Read(NamedTuple):
  """What the checkpoint initializer reads: RestoreV2's constant inputs."""
  prefix: Any
  tensor_names: Any
  shape_and_slices: Any
  dtypes: List[tf.DType]


def _restore_op(variable: Any) -> Optional[tf.Operation]:
  """The RestoreV2 op init_from_checkpoint made the initial value, or None.

  Eagerly made variables hold no initial value (None); an eager warm start
  leaves an eager tensor, which has no op.
  """
  initial = getattr(variable, "_initial_value", None)
  if initial is None or isinstance(initial, tf.__internal__.EagerTensor):
    return None
  op = getattr(initial, "op", None)
  return op if op is not None and op.type == "RestoreV2" else None


def _read_of(variable: Any, op: tf.Operation) -> _Read:
  values = [tf.get_static_value(tensor) for tensor in op.inputs]
  if any(value is None for value in values):
    raise NeedsGraphEngine(
        f"tf.compat.v1.train.init_from_checkpoint for variable "
        f"{variable.name!r} reads a checkpoint named by a computed tensor. "
        f"{GRAPH_ENGINE_FIX}")
  return _Read(values[0], values[1], values[2], op.get_attr("dtypes"))


def plain_or_mirrored(variable: Any) -> bool:
  """A variable (or mirrored variable) one eager assign sets everywhere."""
  return isinstance(variable, (values_lib.MirroredVariable,
                               resource_variable_ops.BaseResourceVariable))


def _assignable(variable: Any) -> bool:
  """A variable one eager assign sets everywhere it lives.

  A plain variable, or a mirrored one (MirroredStrategy, MultiWorkerMirrored),
  whose assign in cross-replica context writes every local copy, as TF1's
  initializer gave each copy the primary's initial value. Not the sharded
  and aggregating variables of parameter-server training.
  """
  if isinstance(variable, values_lib.MirroredVariable):
    return True
  return not tf.distribute.has_strategy() and plain_or_mirrored(variable)


def check(variables: Iterable[Any], local: Set[int]) -> None:
  """Raises NeedsGraphEngine where a request cannot be honoured exactly.

  Called after the trace that made the variables (eagerly, with no
  initializer op), so what it finds was set by model_fn.

  Args:
    variables: the trace's captured variables.
    local: ids of those no checkpoint holds (initialized on every call).
  """
  for variable in variables:
    op = _restore_op(variable)
    if op is None:
      if getattr(variable, "_initializer_op", None) is not None:
        # Set in the trace (an eagerly made variable holds None): model_fn
        # replaced the initializer some other way, which no step runs
        # (tf.compat.v1.train.warm_start with a vocabulary remap inside
        # model_fn assigns a remapped matrix).
        raise NeedsGraphEngine(
            f"model_fn replaced the initializer of {variable.name!r} (e.g. "
            "tf.compat.v1.train.warm_start inside model_fn), which the "
            f"function engine cannot run. {GRAPH_ENGINE_FIX}")
      continue
    where = None
    if id(variable) in local:
      where = "a local variable (TF1 initialized it on every call)"
    elif not _assignable(variable):
      where = (f"a {type(variable).__name__} (only plain and mirrored "
               "variables are given their checkpoint value)")
    if where is not None:
      raise NeedsGraphEngine(
          f"tf.compat.v1.train.init_from_checkpoint in model_fn sets the "
          f"initial value of {variable.name!r}, {where}, which the function "
          f"engine cannot honour exactly. {GRAPH_ENGINE_FIX}")
    _read_of(variable, op)


def requested(variable: Any) -> Optional[_Read]:
  """The checkpoint read init_from_checkpoint asked for `variable`, or None."""
  op = _restore_op(variable)
  return None if op is None else _read_of(variable, op)


def assign(variable: Any, read: _Read) -> None:
  """Runs `read` eagerly (RestoreV2 on the CPU) into `variable`.

  The write is a shape-checked assign, as the initializer TF1 ran.
  """
  with tf.init_scope(), tf.device("/cpu:0"):
    value = tf.raw_ops.RestoreV2(
        prefix=read.prefix, tensor_names=read.tensor_names,
        shape_and_slices=read.shape_and_slices, dtypes=read.dtypes)[0]
  with tf.init_scope():
    variable.assign(value)


def run(variables: Iterable[Any]) -> None:
  """Gives each requested variable its checkpoint value, as TF1's initializer.

  Called where no checkpoint is restored, before a warm start (which TF1
  applied after model_fn, so it wins).
  """
  for variable in variables:
    read = requested(variable)
    if read is not None:
      assign(variable, read)
