"""Variables model_fn uses that were made before it ran: refused, as by TF1.

The Estimator called model_fn in a new TF1 graph on every call, so a model_fn
could use only variables it made itself: a tf-keras model built outside it
(say at module level, with an input shape), or any variable made eagerly,
failed with `RuntimeError: Attempting to capture an EagerTensor without
building a function.` (checked against TF 2.15.1 + tensorflow-estimator
2.15.0). The function engine traces model_fn in a TF2 function, which
captures such a variable and trains it: no checkpoint holds it (only
variables model_fn made are saved), nothing restores it, and another process
starts it afresh, with no error. So it is refused here, with TF's error
first, on the first trace, before any step runs or any file is written.

A captured resource is a model's variable when its handle carries a
variable's dtype and shape (tables, iterators and summary writers carry none)
and an op reads, writes or updates it as a variable, or hands it to a loop,
branch or function that may (a strategy's collective ordering token is a
variable that only collectives take). The engine's own eager variables that
model_fn's ops use (the random streams' counters) are marked with
`engine_variable`.
"""

import contextlib
from typing import Any, Callable, Iterator, List

import tensorflow as tf

TF_ERROR = ("Attempting to capture an EagerTensor without building a "
            "function.")

# Set on the handle of an eager variable the engine makes for model_fn's ops
# (the variable itself may be gone once its op is built; the handle stays).
_ENGINE_MARK = "_estimator_compat_engine_variable"


# Set on the handles of the variables a model_fn call made.
_MODEL_FN_MARK = "_estimator_compat_made_by_model_fn"


def engine_variable(variable: tf.Variable) -> tf.Variable:
  """Marks an eager variable the engine makes for model_fn's ops; returns it."""
  setattr(variable.handle, _ENGINE_MARK, True)
  return variable


def made_by_model_fn(variable: Any) -> None:
  """Marks a variable a model_fn call made: a later call using it is told
  so, with the error TF1 gave for a variable of another graph."""
  for handle in _handle_tensors([variable]):
    setattr(handle, _MODEL_FN_MARK, True)


def _handle_tensors(variables) -> List[Any]:
  """Every handle of `variables` and of their parts (replicas, shards, a
  parameter server's variable)."""
  found: List[Any] = []
  pending = list(variables)
  while pending:
    variable = pending.pop()
    try:
      found.append(variable.handle)
    except (AttributeError, ValueError, RuntimeError):
      pass  # A distributed wrapper outside a replica: its parts below.
    for parts in (getattr(variable, "values", None),
                  getattr(variable, "variables", None)):
      if isinstance(parts, (list, tuple)):
        pending.extend(parts)
    inner = getattr(variable, "_v", None)
    if inner is not None:
      pending.append(inner)
  return found


# Ops that use a resource as a variable, by name prefix.
_VARIABLE_USES = (
    "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
    "AssignSubVariableOp", "VarIsInitializedOp", "VariableShape",
    "ResourceGather", "ResourceScatter", "ResourceApply", "ResourceSparseApply",
    "ResourceStridedSliceAssign",
    # Control flow and calls pass it on to a body that may use it so.
    "While", "StatelessWhile", "If", "StatelessIf", "Case", "StatelessCase",
    "PartitionedCall", "StatefulPartitionedCall")


def _used_as_variable(internal: Any) -> bool:
  return any(op.type.startswith(_VARIABLE_USES)
             for op in internal.consumers())


def _is_variable_handle(tensor: Any) -> bool:
  if not isinstance(tensor, tf.__internal__.EagerTensor) or (
      tensor.dtype != tf.resource):
    return False
  data = getattr(tensor, "_handle_data", None)
  return data is not None and data.is_set and bool(data.shape_and_type)


@contextlib.contextmanager
def refused(own_variables: Callable[[], Any]) -> Iterator[None]:
  """Raises if model_fn, called inside, used a variable it did not make.

  Args:
    own_variables: returns the variables the engine made for model_fn
      (VariableCapture.variables), read once model_fn has returned.

  Yields:
    Nothing; call model_fn inside.

  Raises:
    ValueError: for a variable an earlier model_fn call made (TF1's error
      for a variable of another graph), then what read it and the fix.
    RuntimeError: for any other (TF1's error for an eager one), the same.
  """
  graph = tf.compat.v1.get_default_graph()
  before = {id(internal) for _, internal in getattr(graph, "captures", ())}
  yield
  captured = [(external, internal) for external, internal in
              getattr(graph, "captures", ())
              if id(internal) not in before and _is_variable_handle(external)
              and _used_as_variable(internal)]
  if not captured:
    return
  own = {id(handle) for handle in _handle_tensors(own_variables())}
  for external, internal in captured:
    if id(external) in own or getattr(external, _ENGINE_MARK, False):
      continue
    users = [op.name for op in internal.consumers()]
    if getattr(external, _MODEL_FN_MARK, False):
      raise ValueError(
          f"Tensor {users[0] if users else internal.op.name!r} must be from "
          "the same graph as model_fn's inputs: model_fn used a variable an "
          "earlier call of it made (a tf-keras model or layer made outside "
          "model_fn and built in an earlier call). The Estimator called "
          "model_fn in a new graph each time and raised this error too. "
          "Fix: build the model (or make the variable) inside model_fn; "
          "its values come back from the checkpoint on every call.")
    raise RuntimeError(
        f"{TF_ERROR} model_fn used a variable made before it was called "
        f"(read by {users[0] if users else internal.op.name!r}): a tf-keras "
        "model or layer built outside model_fn, or a variable made eagerly. "
        "The Estimator called model_fn in a new graph each time and raised "
        "this error too; no checkpoint would hold that variable. Fix: build "
        "the model (or make the variable) inside model_fn; to start from "
        "weights trained elsewhere, use warm_start_from or "
        "tf.compat.v1.train.init_from_checkpoint.")
