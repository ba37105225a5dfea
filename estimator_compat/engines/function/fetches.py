"""What `Session.run` fetched, as a function pruned from the model's graph.

`Session.run` accepted any nested structure of tensors, operations,
variables (including the unread-variable object that `assign_add` returns)
and their names. A pruned function takes tensors and operations only, and
the function engine holds the model's variables eagerly, outside its graph.
This module turns the one into the other:

- `as_graph_fetch` makes one fetched value a tensor or operation of the
  graph (a variable becomes a read of its value; an unread variable a read
  after its assignment, which is what `Session.run` returned).
- `GraphFetcher` evaluates a whole fetch structure for a hook's
  `session.run()`, outside of any step: eagerly held variables are read,
  graph tensors and operations run in a function pruned to them (cached per
  fetch set). What needs the input batch is refused, since running it would
  consume a batch that training then never sees.
"""

from typing import (Any, Callable, Dict, Iterable, Iterator, List, Sequence,
                    Set, Tuple)

import tensorflow as tf
from estimator_compat.engines.function.session import (GraphVariable,
                                                       is_eager_variable)
from estimator_compat.errors import (GRAPH_ENGINE_FIX,
                                     UnsupportedOnFunctionEngine)


def as_graph_fetch(value: Any, graph: tf.Graph) -> Any:
  """`value` as an Operation or Tensor of `graph`, as Session.run fetched it.

  Args:
    value: a Tensor, Operation, variable, tensor/operation name, or None.
    graph: the model's graph; reads of variables are added to it.

  Returns:
    None, or a Tensor or Operation of `graph`.
  """
  if value is None or isinstance(value, tf.Operation):
    return value
  if isinstance(value, str):
    return graph.as_graph_element(value)
  if isinstance(value, tf.Variable):
    with graph.as_default():
      return value.read_value()
  return value


def _walk(fetches: Iterable[Any]) -> Iterator[tf.Operation]:
  """Every operation the fetches need (by data or control), each once."""
  stack = [f if isinstance(f, tf.Operation) else f.op for f in fetches
           if f is not None]
  seen = set()
  while stack:
    op = stack.pop()
    if op in seen:
      continue
    seen.add(op)
    yield op
    stack.extend(t.op for t in op.inputs)
    stack.extend(op.control_inputs)


def reached_ops(fetches: Iterable[Any]) -> Set[tf.Operation]:
  """The operations the fetches need (by data or control)."""
  return set(_walk(fetches))


def depends_on(fetches: Iterable[Any], sources: Sequence[tf.Operation]) -> Any:
  """The first of `sources` that a fetch needs (by data or control), or None."""
  wanted = set(sources)
  return next((op for op in _walk(fetches) if op in wanted), None)


class GraphFetcher:
  """Runs `session.run(fetches)` for hooks, outside of the training steps.

  Args:
    graph: the model's traced graph.
    variables: the eagerly held variables by legacy name (no ':0').
    prune: `prune(fetches)` returns a no-argument function computing the
      flat list `fetches` of graph tensors/operations.
    input_ops: the operations that produce the input batch.
  """

  def __init__(self, graph: tf.Graph, variables: Dict[str, tf.Variable],
               prune: Callable[[List[Any]], Callable[[], Any]],
               input_ops: Sequence[tf.Operation]):
    self._graph = graph
    self._variables = variables
    self._prune = prune
    self._input_ops = list(input_ops)
    self._functions: Dict[Tuple[str, ...], Callable[[], Any]] = {}
    self._reads: Dict[Any, Any] = {}

  def resolve(self, item: Any) -> Any:
    """A fetch leaf as an eager variable, or a graph Tensor or Operation."""
    if isinstance(item, str):
      name = item[:-2] if item.endswith(":0") else item
      variable = self._variables.get(name)
      if variable is not None:
        return variable
      try:
        return self._graph.as_graph_element(item)
      except (KeyError, ValueError) as e:
        raise UnsupportedOnFunctionEngine(
            f"A hook called session.run({item!r}), which names nothing in the "
            f"model's graph ({e}). {GRAPH_ENGINE_FIX}") from None
    if isinstance(item, GraphVariable):
      item = item.variable
    if is_eager_variable(item):
      return item
    if isinstance(item, tf.Variable):
      key = item.ref()
      if key not in self._reads:
        self._reads[key] = as_graph_fetch(item, self._graph)
      return self._reads[key]
    if isinstance(item, (tf.Operation, tf.Tensor)) and not hasattr(
        item, "numpy") and item.graph is self._graph:
      return item
    if item is None:
      raise TypeError("Fetch argument None has invalid type <class "
                      "'NoneType'>.")
    raise UnsupportedOnFunctionEngine(
        f"A hook called session.run({item!r}), which is not a tensor, "
        f"operation or variable of the model's graph. {GRAPH_ENGINE_FIX}")

  def run(self, fetches: Any) -> Any:
    """Values of `fetches` (any nest of fetchable leaves), same structure."""
    leaves = tf.nest.flatten(fetches)
    resolved = [self.resolve(leaf) for leaf in leaves]
    in_graph = [r for r in resolved if not is_eager_variable(r)]
    computed = iter(self._compute(in_graph) if in_graph else ())
    results = []
    for item in resolved:
      if is_eager_variable(item):
        results.append(item.numpy())
      else:
        value = next(computed)
        results.append(None if value is None else value.numpy())
    return tf.nest.pack_sequence_as(fetches, results)

  def _compute(self, items: List[Any]) -> List[Any]:
    """Values of graph tensors/operations (None for operations), in order."""
    unique = list({id(i): i for i in items}.values())
    values = dict(zip((id(i) for i in unique), self._compute_unique(unique)))
    return [values[id(i)] for i in items]

  def _compute_unique(self, items: List[Any]) -> List[Any]:
    key = tuple((isinstance(i, tf.Operation), i.name) for i in items)
    function = self._functions.get(key)
    if function is None:
      needed = depends_on(items, self._input_ops)
      if needed is not None:
        raise UnsupportedOnFunctionEngine(
            f"A hook called session.run() on {[i.name for i in items]}, which "
            f"needs the input batch ({needed.name}); on the function engine "
            "a hook's session.run() can evaluate only what does not read the "
            f"input (ask for such tensors in before_run's SessionRunArgs). "
            f"{GRAPH_ENGINE_FIX}")
      function = self._prune(list(items))
      self._functions[key] = function
    return list(function())
