"""A tf.keras Metric in `eval_metric_ops`, as the Estimator evaluated it.

The Estimator accepted a Keras `Metric` object, updated in model_fn, in
place of a `(value, update_op)` pair: it took `metric.result()` as the value
and the update `update_state()` made in the graph as the update op, and
added the metric's variables to LOCAL_VARIABLES and METRIC_VARIABLES, so
that each evaluation starts them from their initial values.

In a TF1 graph (graph engine) Keras records that update in
`metric.updates`. Inside a function graph (function engine) it records
nothing, so the update is found as what writes the metric's variables in
that graph.
"""

from typing import Any, List, Tuple

import tensorflow as tf

_GraphKeys = tf.compat.v1.GraphKeys
_WRITES = ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp")


def _add_to_collection(graph: tf.Graph, key: str, variables: List[Any]) -> None:
  present = graph.get_collection(key)
  for variable in variables:
    if not any(v is variable for v in present):
      graph.add_to_collection(key, variable)


def _handles_in(graph: tf.Graph, variables: List[Any]) -> set:
  """Ids of the tensors through which `graph` uses the variables' handles."""
  handles = []
  for variable in variables:
    for component in getattr(variable, "values", None) or (variable,):
      handles.append(component.handle)
  ids = {id(h) for h in handles}
  for external, internal in getattr(graph, "captures", ()):
    if id(external) in ids:
      ids.add(id(internal))
  return ids


def _writes_in_function(graph: tf.Graph, variables: List[Any]
                       ) -> List[tf.Operation]:
  handles = _handles_in(graph, variables)
  return [op for op in graph.get_operations()
          if (op.type in _WRITES or op.type.startswith("ResourceScatter"))
          and op.inputs and id(op.inputs[0]) in handles]


def value_and_update(name: str, metric: Any) -> Tuple[Any, Any]:
  """(value tensor, update op) of a Keras Metric updated in model_fn.

  Must be called in the model's graph, as model_fn returned.

  Raises:
    ValueError: model_fn never called `update_state` on the metric.
  """
  graph = tf.compat.v1.get_default_graph()
  updates = updates_of(name, metric)
  variables = list(metric.variables)
  _add_to_collection(graph, _GraphKeys.LOCAL_VARIABLES, variables)
  _add_to_collection(graph, _GraphKeys.METRIC_VARIABLES, variables)
  return metric.result(), tf.group(*updates)


def updates_of(name: str, metric: Any) -> List[tf.Operation]:
  """The ops `update_state` made for a Keras Metric (see the module doc).

  Raises:
    ValueError: model_fn never called `update_state` on the metric.
  """
  if tf.inside_function():
    updates = _writes_in_function(tf.compat.v1.get_default_graph(),
                                  list(metric.variables))
  else:
    updates = list(metric.updates)
  if not updates:
    raise ValueError(
        f'Please call update_state(...) on the "{metric.name}" metric '
        f"(eval_metric_ops[{name!r}]). Fix: call metric.update_state(labels, "
        "predictions) in model_fn before returning the metric.")
  return updates
