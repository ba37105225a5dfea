"""Prediction of many batches in one call, over a TracedModel.

`PredictionBatches` is the part of TracedModel (traced_model.py) that runs
predict()'s batches in one function call where the model allows it: the
model's part of the graph pruned to a function of the input element, in a
loop that reads the input itself and stops at its end.
"""

from typing import Any, Dict, List, Tuple

import numpy as np
import tensorflow as tf

# Stateful ops whose state is shared by every function that runs them
# (variables, lookup tables) or that only act in order (print, assert): a
# prediction loop may run them in a function of its own.
_SHARED_STATE_OPS = frozenset([
    "ReadVariableOp", "ResourceGather", "ResourceGatherNd", "VarHandleOp",
    "VariableShape", "VarIsInitializedOp", "AssignVariableOp",
    "AssignAddVariableOp", "AssignSubVariableOp", "HashTableV2",
    "MutableHashTableV2", "MutableHashTableOfTensorsV2",
    "MutableDenseHashTableV2", "LookupTableFindV2", "LookupTableSizeV2",
    "LookupTableExportV2", "PrintV2", "Print", "Assert"])


class PredictionBatches:
  """TracedModel's batched prediction (mixed into TracedModel).

  Uses the trace's `_fetches`, `_strategy`, `_element`, `_iterator`,
  `_functions`, `_batches_loop`, `_call_time_inputs`, `_prune_wrapped` and
  `_loop_function`.
  """

  _batches_loop: Any  # The loop, False where it cannot run, None: not yet.

  def _make_batches_loop(self) -> Any:
    """The loop of `predict_batches`, or None where it cannot run.

    The model's part of the graph is pruned to a function of the input
    element (fed where the step's get_next delivered it); the loop reads the
    elements itself with get_next_as_optional, so the end of the input ends
    the loop instead of failing the call and losing its batches.
    """
    fetches = dict(self._fetches)
    if (self._strategy is not None or self._element is None or not fetches or
        not all(isinstance(v, tf.Tensor) and v.shape.rank is not None
                for v in fetches.values())):
      return None
    feeds = tf.nest.flatten(self._element, expand_composites=True)
    if self._call_time_inputs(fetches)[0]:
      return None
    pruned = self._prune_wrapped(feeds, fetches)
    for op in pruned.graph.get_operations():
      if op.type.startswith("IteratorGetNext"):
        return None  # The model reads the input elsewhere too.
      if op.op_def.is_stateful and op.type not in _SHARED_STATE_OPS:
        # E.g. a random op: its state lives in the kernel of each function,
        # so a second function would restart the stream one batch per call
        # continues (and a nested call or control flow may hold one).
        return None
    # Read at trace time only; release() drops it (a closure would hold it).
    iterator = [self._iterator]
    self._functions.append(iterator)
    keys = sorted(fetches)
    ranks = {k: fetches[k].shape.rank for k in keys}

    def run_batches(n):
      values = [tf.TensorArray(fetches[k].dtype, size=0, dynamic_size=True,
                               infer_shape=False,
                               element_shape=tf.TensorShape([None]))
                for k in keys]
      shapes = [tf.TensorArray(tf.int64, size=0, dynamic_size=True,
                               element_shape=tf.TensorShape([ranks[k]]))
                for k in keys]

      def going(ran, ended, values, shapes):
        del values, shapes
        return tf.logical_and(ran < n, tf.logical_not(ended))

      def one_batch(ran, ended, values, shapes):
        del ended
        # TensorFlow orders stateful ops within one iteration only: without
        # this chain, a batch's model ops (a random stream's counter, a
        # variable) could run before the previous batch's (`ran` comes out
        # of an iteration once its batch ran).
        with tf.control_dependencies([ran]):
          optional = iterator[0].get_next_as_optional()

        def run():
          outputs = pruned(*tf.nest.flatten(optional.get_value(),
                                            expand_composites=True))
          return ([tf.reshape(outputs[k], [-1]) for k in keys],
                  # (Shape's own int64 out_type here trips TF's type
                  # inference into a warning; a cast does not.)
                  [tf.cast(tf.shape(outputs[k]), tf.int64) for k in keys])

        def nothing():
          # Written past the last batch; the caller reads `ran` batches.
          return ([tf.zeros([0], fetches[k].dtype) for k in keys],
                  [tf.zeros([ranks[k]], tf.int64) for k in keys])

        flat, shape = tf.cond(optional.has_value(), run, nothing)
        values = [ta.write(ran, v) for ta, v in zip(values, flat)]
        shapes = [ta.write(ran, v) for ta, v in zip(shapes, shape)]
        has_value = optional.has_value()
        with tf.control_dependencies(flat + shape):
          ran = ran + tf.cast(has_value, tf.int32)
        return ran, tf.logical_not(has_value), values, shapes

      ran, _, values, shapes = tf.while_loop(
          going, one_batch, (tf.constant(0), tf.constant(False), values,
                             shapes))
      return ran, ({k: ta.concat() for k, ta in zip(keys, values)},
                   {k: ta.stack() for k, ta in zip(keys, shapes)})

    return self._loop_function(run_batches)

  @property
  def can_batch_predictions(self) -> bool:
    """Whether `predict_batches` can run many batches in one call."""
    if self._batches_loop is None:
      self._batches_loop = self._make_batches_loop() or False
    return self._batches_loop is not False

  def predict_batches(self, num_batches: int
                     ) -> Tuple[List[Dict[str, Any]], bool]:
    """Runs up to `num_batches` steps fetching what every step fetches.

    In one call (prediction: the predictions of each batch, in order).
    Only where `can_batch_predictions`.

    Returns:
      (each batch's fetched values as numpy arrays, whether the input ended
      before `num_batches`).
    """
    ran, (flat, shapes) = self._batches_loop(tf.constant(num_batches))
    ran = int(ran)
    batches: List[Dict[str, Any]] = [{} for _ in range(ran)]
    for key, values in flat.items():
      values = values.numpy()
      sizes = shapes[key].numpy()
      start = 0
      for i, shape in enumerate(sizes[:ran]):
        size = int(np.prod(shape))
        value = values[start:start + size].reshape(shape)
        # A scalar as `.numpy()` gives it (a numpy scalar, bytes).
        batches[i][key] = value[()] if value.ndim == 0 else value
        start += size
    return batches, ran < num_batches
