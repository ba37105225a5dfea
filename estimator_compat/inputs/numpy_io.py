"""numpy_input_fn: the legacy arguments, batches in the legacy order.

With `shuffle=False` batches are the rows in order, epoch after epoch, a batch
may span two epochs, and the last batch of the last epoch may be short: the
order the legacy queue-based implementation produced. With `shuffle=True` each
epoch is a fresh permutation (the legacy shuffled within a bounded queue; ours
shuffles the whole epoch, and is reproducible from the graph-level seed).
Arrays are served from Python, batch by batch, so they are never embedded in
the graph (the graph.pbtxt and .meta files stay small, as they did).
"""

from typing import Any, Callable, Dict, Optional, Union

import numpy as np
import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import context

from estimator_compat.engines.function import op_seeds

# TensorFlow truncates seeds to this range (random_seed.get_seed).
_MAXINT32 = 2**31 - 1

Array = Union[np.ndarray, Dict[str, np.ndarray]]


def _as_dict(value: Any, what: str) -> Dict[str, np.ndarray]:
  if isinstance(value, dict):
    return {key: np.asarray(array) for key, array in value.items()}
  return {what: np.asarray(value)}


def _check_x(x: Any) -> None:
  """x is a non-empty dict or a non-empty array (the Estimator's checks)."""
  if isinstance(x, dict):
    if not x:
      raise ValueError("x cannot be an empty dict. Fix: pass the features as "
                       "a dict of arrays, one per feature.")
  elif isinstance(x, np.ndarray):
    if x.size == 0:
      raise ValueError("x cannot be an empty array. Fix: pass at least one "
                       "row of features.")
  else:
    raise TypeError(f"x must be a dict or array; got {type(x).__name__}. "
                    "Fix: pass np.asarray(x), or a dict of arrays.")


def _check_y(x: Any, y: Any) -> None:
  """y is None, an array, or a non-empty dict whose keys are not x's."""
  if not isinstance(y, dict):
    return
  if not y:
    raise ValueError("y cannot be empty dict, use None instead.")
  if isinstance(x, dict):
    duplicates = set(x) & set(y)
    if duplicates:
      raise ValueError(
          f"{len(duplicates)} duplicate keys are found in both x and y: "
          f"{duplicates}. Fix: rename the label keys.")


def _batch_indices(num_rows: int, batch_size: int, num_epochs: Optional[int],
                   shuffle: bool, seed: Optional[int]):
  """Yields the row indices of each batch."""
  rng = np.random.RandomState(seed)
  pending = np.zeros([0], dtype=np.int64)
  epoch = 0
  while num_epochs is None or epoch < num_epochs:
    order = rng.permutation(num_rows) if shuffle else np.arange(num_rows)
    pending = np.concatenate([pending, order])
    epoch += 1
    while len(pending) >= batch_size:
      yield pending[:batch_size]
      pending = pending[batch_size:]
  if len(pending):
    yield pending


def check_shuffle(shuffle: Any) -> None:
  """shuffle is True or False (the Estimator's check and wording)."""
  if not isinstance(shuffle, bool):
    raise ValueError(
        "shuffle must be provided and explicitly set as boolean (it is "
        f"recommended to set it as True for training); got {shuffle}. Fix: "
        "pass shuffle=True for training, shuffle=False for eval/predict.")


def check_batch_and_epochs(caller: str, batch_size: Any,
                           num_epochs: Any) -> None:
  """A positive batch_size; num_epochs None or >= 0 (0: no batches)."""
  if not isinstance(batch_size, int) or batch_size <= 0:
    raise ValueError(f"{caller}: batch_size must be > 0, got "
                     f"{batch_size!r}.")
  if num_epochs is not None and (not isinstance(num_epochs, int) or
                                 num_epochs < 0):
    raise ValueError(f"{caller}: num_epochs must be >= 0 or None (repeat "
                     f"forever), got {num_epochs!r}.")


def arrays_input_fn(x: Dict[str, np.ndarray],
                    y: Optional[Dict[str, np.ndarray]],
                    batch_size: int, num_epochs: Optional[int], shuffle: bool,
                    unwrap_x: Optional[str], unwrap_y: Optional[str]
                   ) -> Callable[[], Any]:
  """The input_fn over dicts of equal-length arrays; shared by numpy/pandas."""
  # Features and labels by position: a label may share a feature's key (a
  # pandas y DataFrame may repeat x's column names).
  x_keys = list(x)
  y_keys = [] if y is None else list(y)
  arrays = [x[key] for key in x_keys] + [y[key] for key in y_keys]
  if not x_keys:
    raise ValueError("x cannot be an empty dict. Fix: pass the features as a "
                     "dict of arrays, one per feature.")
  if len({len(array) for array in arrays}) > 1:
    # Named as the Estimator named them: an array x as its dict key
    # '__direct_np_input__', an array y by its shape alone.
    x_shapes = {("__direct_np_input__" if key == unwrap_x else key):
                x[key].shape for key in x_keys}
    y_shapes = None if y is None else (
        y[unwrap_y].shape if unwrap_y else
        {key: y[key].shape for key in y_keys})
    raise ValueError(
        "Length of tensors in x and y is mismatched. All elements in x and y "
        f"must have the same length.\nShapes in x: {x_shapes}\nShapes in y: "
        f"{y_shapes}\nFix: give every feature and label array the same "
        "number of rows.")
  num_rows = len(arrays[0])
  dtypes = tuple(tf.as_dtype(array.dtype) for array in arrays)
  shapes = tuple(tf.TensorShape([None] + list(array.shape[1:]))
                 for array in arrays)

  def input_fn():
    # The graph seed, as the Estimator's graph had; eagerly the global seed
    # (the function engine sets it to tf_random_seed while input_fn runs).
    # Op-seed requests as the Estimator's queues made them: one for the
    # RandomShuffleQueue of shuffle=True, none otherwise, so a model_fn's
    # unseeded random ops (Dropout) get the same op seeds (finding G10).
    seed = tf.compat.v1.get_default_graph().seed if not (
        tf.executing_eagerly()) else context.global_seed()
    seed = None if seed is None else seed % _MAXINT32
    if shuffle and tf.executing_eagerly():
      tf.compat.v1.get_seed(None)  # the shuffle queue's request

    def generate():
      for rows in _batch_indices(num_rows, batch_size, num_epochs, shuffle,
                                 seed):
        yield tuple(array[rows] for array in arrays)

    dataset = tf.data.Dataset.from_generator(
        generate, output_signature=tuple(
            tf.TensorSpec(shape, dtype) for shape, dtype in zip(shapes, dtypes)))

    def to_structure(*tensors):
      features = dict(zip(x_keys, tensors[:len(x_keys)]))
      features = features[unwrap_x] if unwrap_x else features
      if y is None:
        return features
      labels = dict(zip(y_keys, tensors[len(x_keys):]))
      return features, (labels[unwrap_y] if unwrap_y else labels)

    dataset = dataset.map(to_structure)
    if tf.executing_eagerly() or tf.inside_function():
      # Eager callers and dataset functions (per-worker input of
      # parameter-server training) take the Dataset itself.
      return dataset
    graph = tf.compat.v1.get_default_graph()
    requested = op_seeds.requested_in(graph)
    iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)
    # Its own request undone; the shuffle queue's made.
    op_seeds.continue_numbering(graph, requested + int(shuffle))
    return iterator.get_next()

  # The function engine may call it eagerly: one call, giving the Dataset.
  input_fn.estimator_compat_eager_dataset = True
  return input_fn


def numpy_input_fn(x: Array,
                   y: Optional[Array] = None,
                   batch_size: int = 128,
                   num_epochs: Optional[int] = 1,
                   shuffle: Optional[bool] = None,
                   queue_capacity: int = 1000,
                   num_threads: int = 1) -> Callable[[], Any]:
  """Returns an input_fn that feeds dicts of numpy arrays to a model.

  Args:
    x: dict of arrays (features), or one array.
    y: array or dict of arrays (labels), or None.
    batch_size: rows per batch.
    num_epochs: passes over the data; None repeats forever.
    shuffle: required, True or False.
    queue_capacity: accepted for compatibility; unused.
    num_threads: accepted for compatibility; unused (order is always
      deterministic).

  Returns:
    An input_fn. Called in a graph it returns (features, labels) tensors, as
    the legacy one did; called eagerly it returns a tf.data.Dataset.

  Raises:
    ValueError: bad arguments, with the fix.
  """
  del queue_capacity, num_threads
  check_shuffle(shuffle)
  check_batch_and_epochs("numpy_input_fn", batch_size, num_epochs)
  _check_x(x)
  _check_y(x, y)
  x_dict = _as_dict(x, "__x__")
  y_dict = None if y is None else _as_dict(y, "__y__")
  return arrays_input_fn(
      x_dict, y_dict, batch_size, num_epochs, shuffle,
      unwrap_x=None if isinstance(x, dict) else "__x__",
      unwrap_y=None if (y is None or isinstance(y, dict)) else "__y__")
