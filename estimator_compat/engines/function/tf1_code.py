"""model_fn code that runs only in a TF1 graph, found while tracing it.

Some legacy model_fn code is valid only in a TF1 Graph: it uses a Tensor as
a dict key or set member (a feed_dict such as Scaffold(init_feed_dict=
{placeholder: value})), which TensorFlow refuses inside a function graph.
Such an error, raised while the function engine traces the model_fn (before
any step runs or file is written), becomes NeedsGraphEngine, so that the
default engine runs the call on the graph engine, where the code works as it
did under the Estimator.
"""

import contextlib
from typing import Iterator

from estimator_compat.errors import (GRAPH_ENGINE_FIX, NeedsGraphEngine,
                                     UnsupportedOnFunctionEngine)
from estimator_compat.mode_keys import ModeKeys

_CALLS = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate",
          ModeKeys.PREDICT: "predict"}
# TensorFlow's message for hashing a Tensor inside a function graph.
_UNHASHABLE = "Tensor is unhashable"
# TensorFlow's function that groups variables' initializer ops (what
# tf.compat.v1.local_variables_initializer() and its kin call): the function
# engine's variables are created eagerly and have no initializer op in the
# traced graph, so it fails with a TypeError there.
_INITIALIZER_GROUP = "variables_initializer"
# tf.group() of such a variable's `.initializer` (None in the traced graph),
# e.g. Scaffold(init_op=tf.group(w.initializer)): TensorFlow's message then.
_GROUP = "group"
_NONE_IN_GROUP = "Received 'None'"
# TensorFlow's message for a graph-only attribute (`op`, `graph`, `name`,
# `consumers`) of an eager tensor, such as an eagerly created variable's
# handle: `variable.op.name` (the TF1 idiom
# `tf.compat.v1.summary.histogram(v.op.name, v)`) raises it.
_EAGER_UNDEFINED = "is undefined when eager execution is enabled"
# TF1 slot creation reads a partitioned variable's `op.name` for the slot's
# checkpoint name (tf.compat.v1.train optimizers with slots: Adagrad, Adam,
# Momentum, ...).
_SLOT_CREATION = "_create_slot_var"
# Public methods of tf-keras's graph-mode (v1) Layer and Model classes, which
# tf-keras chose in TF 2.15's TF1 graph and not in a TF2 function (its v2
# classes do not have them): `model.get_updates_for(inputs)` grouped a
# batch norm's moving-average updates into the train op.
_KERAS_V1_METHODS = ("get_updates_for", "get_losses_for")


def _raised_in(error: BaseException, function_name: str) -> bool:
  """Whether a frame of `error`'s traceback is a function of that name."""
  tb = error.__traceback__
  while tb is not None:
    if tb.tb_frame.f_code.co_name == function_name:
      return True
    tb = tb.tb_next
  return False


@contextlib.contextmanager
def graph_only_errors(mode: str) -> Iterator[None]:
  """Turns TF1-graph-only errors of the model_fn trace into NeedsGraphEngine.

  Args:
    mode: the ModeKeys value being traced, for the message.

  Raises:
    NeedsGraphEngine: the model_fn used a Tensor as a dict key / set member,
      built an initializer op of its (eagerly created) variables, or read a
      graph-only attribute of one (`variable.op`, also read by TF1 slot
      creation for partitioned variables), or called a method only
      tf-keras's TF1 classes have (`model.get_updates_for`).
  """
  try:
    yield
  except AttributeError as error:
    v1_method = next((name for name in _KERAS_V1_METHODS
                      if f"has no attribute '{name}'" in str(error)), None)
    if v1_method is not None:
      raise NeedsGraphEngine(
          f"model_fn calls the tf-keras method {v1_method}() ({error}), which "
          "tf-keras's TF1 graph-mode Layer and Model classes have and its "
          f"TF2 classes do not, in {_CALLS.get(mode, mode)}(). "
          f"{GRAPH_ENGINE_FIX}") from error
    if _EAGER_UNDEFINED not in str(error):
      raise
    if _raised_in(error, _SLOT_CREATION):
      raise NeedsGraphEngine(
          "model_fn trains partitioned variables with a tf.compat.v1.train "
          "optimizer that has slots, whose checkpoint names TF1 took from "
          "the partitions' graph ops, which the function engine's eagerly "
          f"held variables do not have, in {_CALLS.get(mode, mode)}(). "
          f"{GRAPH_ENGINE_FIX}") from error
    raise NeedsGraphEngine(
        "model_fn reads a graph-only attribute of a variable (e.g. "
        "`variable.op.name`, as in tf.compat.v1.summary.histogram("
        "v.op.name, v)), which the function engine's eagerly held variables "
        f"do not have, in {_CALLS.get(mode, mode)}() ({error}). "
        f"{GRAPH_ENGINE_FIX}") from error
  except TypeError as error:
    if _raised_in(error, _INITIALIZER_GROUP) or (
        _raised_in(error, _GROUP) and _NONE_IN_GROUP in str(error)):
      raise NeedsGraphEngine(
          "model_fn builds an initializer op of its variables (e.g. "
          "tf.compat.v1.local_variables_initializer() or tf.group("
          "w.initializer)), which needs the "
          "variables of a TF1 Session graph, in "
          f"{_CALLS.get(mode, mode)}(). {GRAPH_ENGINE_FIX}") from error
    if _UNHASHABLE not in str(error):
      raise
    raise NeedsGraphEngine(
        "model_fn uses a Tensor as a dict key or set member (e.g. a "
        "feed_dict such as Scaffold(init_feed_dict={placeholder: value})), "
        f"which needs a TF1 Session graph, in {_CALLS.get(mode, mode)}(). "
        f"{GRAPH_ENGINE_FIX}") from error


@contextlib.contextmanager
def hook_session_errors() -> Iterator[None]:
  """NeedsGraphEngine for hooks whose after_create_session needs TF1.

  Hooks' after_create_session runs once the variables exist and before any
  step runs or file is written, so such a call can still move to the graph
  engine: a session.run the eager session refuses (a feed_dict, options, a
  tensor it cannot evaluate) or a Tensor used as a dict key (a feed_dict
  built in Python).

  Raises:
    NeedsGraphEngine: a hook's after_create_session needs a TF1 Session.
  """
  try:
    yield
  except NeedsGraphEngine:
    raise
  except UnsupportedOnFunctionEngine as error:
    raise NeedsGraphEngine(str(error)) from error
  except TypeError as error:
    if _UNHASHABLE not in str(error):
      raise
    raise NeedsGraphEngine(
        "A hook's after_create_session uses a Tensor as a dict key or set "
        "member (e.g. session.run(..., feed_dict={placeholder: value})), "
        f"which needs a TF1 Session graph. {GRAPH_ENGINE_FIX}") from error
