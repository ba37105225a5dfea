"""Puts Keras layer updates into UPDATE_OPS while a model_fn is traced.

In a TF1 graph, `tf.compat.v1.layers.batch_normalization` registers its
moving-average updates in `tf.compat.v1.GraphKeys.UPDATE_OPS`, and legacy
code makes its train_op depend on that collection. Inside a function, tf-keras
leaves them out (tf.function would run them anyway); the function engine
runs only what the step fetches, as a Session did, so it must collect them.
While tracing, each update op a layer adds is also added to UPDATE_OPS.
"""

import contextlib
from typing import Iterator

import tensorflow as tf
from tf_keras.src.engine import base_layer, base_layer_v1

_CLASSES = (base_layer.Layer, base_layer_v1.Layer)


def _record(update) -> None:
  if tf.executing_eagerly() or update is None:
    return
  op = update if isinstance(update, tf.Operation) else getattr(
      update, "op", None)
  graph = tf.compat.v1.get_default_graph()
  key = tf.compat.v1.GraphKeys.UPDATE_OPS
  if op is not None and op.graph is graph and not any(
      op is u for u in graph.get_collection(key)):
    graph.add_to_collection(key, op)


def _recording(update):
  if not callable(update):
    _record(update)
    return update

  def call():
    result = update()
    _record(result)
    return result
  return call


def _collecting(original):
  def add_update(self, updates, *args, **kwargs):
    updates = [_recording(u) for u in tf.nest.flatten(updates)]
    return original(self, updates, *args, **kwargs)
  return add_update


@contextlib.contextmanager
def layer_updates_in_collection() -> Iterator[None]:
  """While active, Keras layer updates also land in UPDATE_OPS."""
  saved = [(cls, cls.__dict__["add_update"]) for cls in _CLASSES
           if "add_update" in cls.__dict__]
  try:
    for cls, original in saved:
      cls.add_update = _collecting(original)
    yield
  finally:
    for cls, original in saved:
      cls.add_update = original
