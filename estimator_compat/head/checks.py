"""Checks of the tensors and arguments a head receives, as TF 2.15 made them.

Each check raises the error TF 2.15's heads raised (same type, same leading
wording, so code and tests matching on it keep working), followed by a
"Fix:" sentence. Shapes known while the graph is built are checked at once;
otherwise an assert op in the graph checks them when the step runs, as the
real heads did.
"""

from typing import Any, Callable, Iterable, Optional

import tensorflow as tf

from estimator_compat.front import fn_args

_LABEL_NONE = (
    "You must provide a labels Tensor. Given: None. Suggested troubleshooting "
    "steps: Check that your data contains your label feature. Check that your "
    "input_fn properly parses and returns labels.")
_SPARSE_LABEL = (
    "SparseTensor labels are not supported. Labels must be a Tensor of shape "
    "[D0, D1, ..., DN, {0}], e.g. [batch_size, {0}].Suggested Fix (1): Check "
    "the label feature in your data. Each example must contain {0} value(s). "
    "If not, your choice of label was probably incorrect. Suggested Fix (2): "
    "In your input_fn, use tf.sparse_tensor_to_dense() to turn labels into a "
    "Tensor.")
_MISMATCHED_LABEL_DIM = (
    "Mismatched label shape. Expected labels dimension={}.  Received {}. "
    "Suggested Fix: If your classifier expects one-hot encoding label, check "
    "your n_classes argument to the estimator and/or the shape of your label. "
    "Otherwise, check the shape of your label.")
_LABEL_SHAPE = (
    "labels shape must be [D0, D1, ... DN, {}]. Suggested Fix: check your "
    "n_classes argument to the head and/or the shape of your label.")
_LOGITS_SHAPE = "logits shape must be [D0, D1, ... DN, logits_dimension]"
_LOGITS_FIX = ("Fix: give the model's last layer head.logits_dimension "
               "units.")


def _rank(tensor: Any) -> Optional[int]:
  return tensor.shape.rank


def dense_labels(labels: Any, logits: tf.Tensor,
                 expected_labels_dimension: int) -> tf.Tensor:
  """Labels as a dense Tensor of shape logits.shape[:-1] + [dimension].

  Labels of one rank less than the logits get a last dimension of 1.

  Raises:
    ValueError: labels are None, a SparseTensor, or of a wrong static shape.
  """
  if labels is None:
    raise ValueError(_LABEL_NONE)
  with tf.compat.v1.name_scope("labels", values=(labels, logits)) as scope:
    labels = tf.compat.v1.convert_to_tensor_or_sparse_tensor(labels)
    if isinstance(labels, tf.SparseTensor):
      raise ValueError(_SPARSE_LABEL.format(expected_labels_dimension))
    if (_rank(labels) is not None and _rank(logits) is not None
        and _rank(labels) == _rank(logits) - 1):
      labels = tf.expand_dims(labels, -1)
    if tf.executing_eagerly():
      shape, logits_shape = tuple(labels.shape), tuple(logits.shape)
      if len(shape) < 2:
        raise ValueError(
            f"labels must have rank at least 2.  Received rank {len(shape)}, "
            f"shape {shape}. Fix: feed labels of shape [batch_size, "
            f"{expected_labels_dimension}].")
      if shape[-1] != expected_labels_dimension:
        raise ValueError(_MISMATCHED_LABEL_DIM.format(
            expected_labels_dimension, shape[-1]))
      expected = logits_shape[:-1] + (expected_labels_dimension,)
      if expected != shape:
        raise ValueError(
            f"{_LABEL_SHAPE.format(expected_labels_dimension)}, "
            f"expected_labels_shape: {expected}. labels_shape: {shape}.")
      return labels
    assert_rank = tf.compat.v1.debugging.assert_rank_at_least(
        labels, 2, message=_LABEL_SHAPE.format(expected_labels_dimension))
    with tf.control_dependencies([assert_rank]):
      if _rank(labels) is not None:
        last = labels.shape[-1]
        if last is not None and last != expected_labels_dimension:
          raise ValueError(_MISMATCHED_LABEL_DIM.format(
              expected_labels_dimension, last))
      expected = tf.concat([tf.compat.v1.shape(logits)[:-1],
                            [expected_labels_dimension]], axis=0)
      actual = tf.compat.v1.shape(labels)
      assert_shape = tf.compat.v1.debugging.assert_equal(
          expected, actual,
          message=_LABEL_SHAPE.format(expected_labels_dimension),
          data=["expected_labels_shape: ", expected, "labels_shape: ",
                actual])
      with tf.control_dependencies([assert_shape]):
        return tf.identity(labels, name=scope)


def logits_with_final_dim(logits: Any, expected_dimension: Any) -> tf.Tensor:
  """Logits as float32, checked to be [D0, ... DN, expected_dimension].

  Raises:
    ValueError: the logits' static shape is of rank < 2 (eagerly) or has
      another last dimension.
  """
  with tf.compat.v1.name_scope("logits", values=(logits,)) as scope:
    logits = tf.cast(logits, tf.float32)
    static = logits.shape
    if tf.executing_eagerly():
      if static.rank < 2:
        raise ValueError(
            f"logits must have rank at least 2.  Received rank {static.rank}, "
            f"shape {tuple(static)}. {_LOGITS_FIX}")
      if (isinstance(expected_dimension, int)
          and static[-1] != expected_dimension):
        raise ValueError(
            f"{_LOGITS_SHAPE}, got {tuple(static)}. {_LOGITS_FIX}")
      return logits
    shape = tf.compat.v1.shape(logits)
    assert_rank = tf.compat.v1.debugging.assert_rank_at_least(
        logits, 2, data=[shape], message=_LOGITS_SHAPE)
    with tf.control_dependencies([assert_rank]):
      if static.rank is not None and static[-1] is not None:
        if (isinstance(expected_dimension, int)
            and static[-1] != expected_dimension):
          raise ValueError(f"{_LOGITS_SHAPE}, got {static}. {_LOGITS_FIX}")
        return logits
      assert_dim = tf.compat.v1.debugging.assert_equal(
          expected_dimension, shape[-1], data=[shape], message=_LOGITS_SHAPE)
      with tf.control_dependencies([assert_dim]):
        return tf.identity(logits, name=scope)


def label_range(labels: tf.Tensor, n_classes: int,
                message: Optional[str] = None) -> tf.Tensor:
  """Labels, checked to lie in [0, n_classes) when the step runs."""
  with tf.compat.v1.name_scope("check_label_range", values=(labels,)):
    if tf.executing_eagerly():
      if not bool(tf.reduce_all(labels <= n_classes - 1)):
        raise ValueError(message or f"Labels must be <= {n_classes} - 1")
      if not bool(tf.reduce_all(labels >= 0)):
        raise ValueError(message or "Labels must be >= 0")
      return labels
    below = tf.compat.v1.debugging.assert_less_equal(
        labels, tf.convert_to_tensor(n_classes - 1, dtype=labels.dtype),
        message=message or "Labels must be <= n_classes - 1")
    non_negative = tf.compat.v1.debugging.assert_non_negative(
        labels, message=message or "Labels must be >= 0")
    with tf.control_dependencies((below, non_negative)):
      return tf.identity(labels)


def loss_fn_args(loss_fn: Callable[..., Any]) -> None:
  """Checks a custom loss_fn's arguments (labels, logits[, features]).

  Raises:
    ValueError: as TF 2.15 did, for a missing or unexpected argument.
  """
  args = fn_args.fn_args(loss_fn)
  for required in ("labels", "logits"):
    if required not in args:
      raise ValueError(
          f"loss_fn must contain argument: {required}. Given arguments: "
          f"{args}. Fix: define loss_fn(labels, logits[, features]).")
  unexpected = sorted(
      set(args) - {"labels", "logits", "features", "loss_reduction"})
  if unexpected:
    raise ValueError(
        f"loss_fn has unexpected args: {unexpected}. Fix: loss_fn may take "
        "only labels, logits, features and loss_reduction.")


def loss_reduction(reduction: Any) -> None:
  """Raises ValueError unless `reduction` is a tf.losses.Reduction but NONE."""
  if (reduction not in tf.keras.losses.Reduction.all()
      or reduction == tf.keras.losses.Reduction.NONE):
    raise ValueError(
        f"Invalid loss_reduction: {reduction}. See `tf.losses.Reduction` for "
        "valid options. Fix: pass e.g. tf.losses.Reduction.SUM_OVER_BATCH_SIZE "
        "or tf.losses.Reduction.SUM.")


def label_vocabulary(vocabulary: Any) -> None:
  if vocabulary is not None and not isinstance(vocabulary, (list, tuple)):
    raise ValueError(
        "label_vocabulary should be a list or a tuple. Given type: "
        f"{type(vocabulary)}. Fix: pass the label strings as a list.")


def n_classes_above_two(n_classes: Any) -> Any:
  """Raises ValueError for a Python int n_classes <= 2 (use BinaryClassHead)."""
  if isinstance(n_classes, int) and n_classes <= 2:
    raise ValueError(
        f"n_classes must be > 2: {n_classes}. Fix: use BinaryClassHead for "
        "two classes.")
  return n_classes


def prediction_keys(keys: Iterable[str], valid: Iterable[str]) -> None:
  valid = list(valid)
  for key in keys:
    if key not in valid:
      raise ValueError(
          f"Prediction key must be in PredictionKeys, given: {key}."
          f"Valid prediction keys include {valid}.")


def call_loss_fn(loss_fn: Callable[..., Any], labels: tf.Tensor,
                 logits: tf.Tensor, features: Any,
                 expected_loss_dim: int = 1) -> tf.Tensor:
  """The unreduced loss of a custom loss_fn, checked to be [D0..DN, dim]."""
  kwargs = {}
  if "features" in fn_args.fn_args(loss_fn):
    kwargs["features"] = features
  with tf.compat.v1.name_scope("call_loss_fn"):
    loss = loss_fn(labels=labels, logits=logits, **kwargs)
    message = ("loss_fn must return Tensor of shape "
               f"[D0, D1, ... DN, {expected_loss_dim}]. ")
    if tf.executing_eagerly():
      expected = tuple(logits.shape)[:-1] + (expected_loss_dim,)
      if tuple(loss.shape) != expected:
        raise ValueError(message, "logits_shape: ", tuple(logits.shape),
                         "loss_shape: ", tuple(loss.shape))
      return loss
    logits_shape = tf.compat.v1.shape(logits, name="logits_shape")
    expected = tf.concat([logits_shape[:-1], [expected_loss_dim]], axis=0,
                         name="expected_loss_shape")
    actual = tf.compat.v1.shape(loss, name="loss_shape")
    check = tf.debugging.Assert(
        tf.reduce_all(tf.equal(actual, expected)),
        data=[message, "logits_shape: ", logits_shape, "loss_shape: ",
              actual],
        name="check_loss_shape")
    with tf.control_dependencies([check]):
      return tf.identity(loss)
