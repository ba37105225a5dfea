"""Records the update ops Keras layers add while a model_fn is traced.

In TensorFlow 2.15's TF1 graph, only `tf.compat.v1.layers` (tf-keras's
legacy_tf_layers) put their updates, such as batch-norm moving averages,
into `tf.compat.v1.GraphKeys.UPDATE_OPS`: their `__call__` adds the layer's
`updates` there. Other Keras layers (`tf.keras.layers.*`) were built as v1
layers in that graph; their updates are only in `layer.updates` /
`model.updates`, not in UPDATE_OPS, so a train_op that depends on UPDATE_OPS
does not run them.

Inside a function tf-keras tracks no update ops (tf.function would run
them anyway), so `updates` is empty and nothing reaches UPDATE_OPS. The
function engine runs only what a step fetches, as a Session did, so while
tracing each update op is recorded where TF 2.15 had it: a legacy layer's in
UPDATE_OPS (unless the layer is neither trainable nor stateful, which its
`updates` leaves out), any other Keras layer's in KERAS_UPDATES, a graph
collection of this package that stands for those layers' `updates`.
While tracing, such a layer's (or Model's) `updates` answer with the ops
recorded for it and its sublayers, as a v1 layer's did in TF 2.15's graph
(a model_fn may make its train op depend on `layer.updates`).
"""

import contextlib
import weakref
from typing import Any, Iterator, List

import tensorflow as tf
from tf_keras.src.engine import base_layer, base_layer_v1
from tf_keras.src.legacy_tf_layers import base as legacy_base

_CLASSES = (base_layer.Layer, base_layer_v1.Layer)
# The updates of Keras layers other than tf.compat.v1.layers (in TF 2.15's
# graph: their `updates`, left out of UPDATE_OPS).
KERAS_UPDATES = "estimator_compat_keras_layer_updates"


# The update ops recorded for each Keras layer (non-legacy), by layer.
_BY_LAYER: "weakref.WeakKeyDictionary[Any, List[tf.Operation]]" = (
    weakref.WeakKeyDictionary())


def _key(layer: Any) -> str:
  if isinstance(layer, legacy_base.Layer):
    return tf.compat.v1.GraphKeys.UPDATE_OPS
  return KERAS_UPDATES


def _record(layer: Any, update: Any) -> None:
  if tf.executing_eagerly() or update is None:
    return
  if isinstance(layer, legacy_base.Layer) and not (layer.trainable or
                                                   layer.stateful):
    return
  op = update if isinstance(update, tf.Operation) else getattr(
      update, "op", None)
  graph = tf.compat.v1.get_default_graph()
  key = _key(layer)
  if op is not None and op.graph is graph and not any(
      op is u for u in graph.get_collection(key)):
    graph.add_to_collection(key, op)
    if key == KERAS_UPDATES:
      _BY_LAYER.setdefault(layer, []).append(op)


def _recorded_updates(self) -> List[tf.Operation]:
  """`updates` of a Keras layer in a trace: its and its sublayers' ops.

  As TF 2.15's v1 layers answered in a graph: only layers that are trainable
  or stateful, and only the ops of the graph being built.
  """
  graph = tf.compat.v1.get_default_graph()
  return [op for layer in self._flatten_layers()  # pylint: disable=protected-access
          if layer.trainable or layer.stateful
          for op in _BY_LAYER.get(layer, ()) if op.graph is graph]


def _recording(layer: Any, update: Any) -> Any:
  if not callable(update):
    _record(layer, update)
    return update

  def call():
    result = update()
    _record(layer, result)
    return result
  return call


def _collecting(original):
  def add_update(self, updates, *args, **kwargs):
    updates = [_recording(self, u) for u in tf.nest.flatten(updates)]
    return original(self, updates, *args, **kwargs)
  return add_update


def keras_updates(graph: tf.Graph) -> List[tf.Operation]:
  """The update ops of non-legacy Keras layers recorded in `graph`."""
  return list(graph.get_collection(KERAS_UPDATES))


@contextlib.contextmanager
def layer_updates_in_collection() -> Iterator[None]:
  """While active, Keras layer updates are recorded as in TF 2.15's graph."""
  saved = [(cls, cls.__dict__["add_update"]) for cls in _CLASSES
           if "add_update" in cls.__dict__]
  updates = base_layer.Layer.__dict__["updates"]
  try:
    for cls, original in saved:
      cls.add_update = _collecting(original)
    base_layer.Layer.updates = property(_recorded_updates)
    yield
  finally:
    for cls, original in saved:
      cls.add_update = original
    base_layer.Layer.updates = updates
