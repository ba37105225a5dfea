"""Explains a variable initializer that reads the input (graph engine).

In the Estimator's graph, MonitoredSession runs the variable initializers
before the input's iterator is initialized (by a hook, after the session is
created). A variable whose initial value is a tensor computed from the
features or labels, or made under `tf.control_dependencies` on them, then
fails: "GetNext() failed because the iterator has not been initialized".
The error keeps TensorFlow's type and wording; the fix is added.
"""

import tensorflow as tf

INITIALIZER_READS_INPUT_FIX = (
    " Fix: a variable's initial value reads the input (it was computed from "
    "features or labels, or made under tf.control_dependencies on them), so "
    "it cannot be initialized before the input is: give the variable a "
    "callable initial value (tf.Variable(lambda: ...)) or an initializer "
    "(tf.compat.v1.get_variable(name, shape, initializer=...)).")

_UNINITIALIZED_ITERATOR = "iterator has not been initialized"


def explained(error: tf.errors.OpError) -> tf.errors.OpError:
  """`error` with the fix added when session setup read the input."""
  if (not isinstance(error, tf.errors.FailedPreconditionError)
      or _UNINITIALIZED_ITERATOR not in error.message
      or INITIALIZER_READS_INPUT_FIX in error.message):
    return error
  return type(error)(error.node_def, error.op,
                     error.message + INITIALIZER_READS_INPUT_FIX)
