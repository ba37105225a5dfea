"""Example weights of a head: the `weight_column` feature, shaped like logits.

TF 2.15's heads read the weight column as a numeric feature column (a
string names one of shape (1,)), cast it to float32 and check that it is
[D0, ... DN] (then given a last dimension of 1), [D0, ... DN, 1] or, where
the head allows per-logit weights, [D0, ... DN, logits_dimension].
"""

from typing import Any, Mapping, Union

import tensorflow as tf

_PER_EXAMPLE = "weights shape must be [D0, D1, ... DN] or [D0, D1, ... DN, 1]"
_PER_LOGIT = ("weights shape must be [D0, D1, ... DN], [D0, D1, ... DN, 1] or "
              "[D0, D1, ... DN, logits_dimension]")


def _numeric_column_type() -> type:
  return type(tf.feature_column.numeric_column("_"))


def _column_tensor(features: Mapping[str, Any], column: Any) -> tf.Tensor:
  """The numeric column's dense tensor, as feature columns computed it."""
  if column.key not in features:
    raise ValueError(
        f"Feature {column.key} is not in features dictionary. The weight "
        f"column {column.key!r} is not among the features "
        f"({sorted(features)}). Fix: have input_fn return it among the "
        "features, or pass the right weight_column to the head.")
  value = tf.compat.v1.convert_to_tensor_or_sparse_tensor(features[column.key])
  if isinstance(value, tf.SparseTensor):
    raise ValueError(
        "The corresponding Tensor of numerical column must be a Tensor. "
        f"SparseTensor is not supported. key: {column.key}. Fix: feed the "
        "weights as a dense Tensor.")
  if value.shape.rank == 1:
    value = tf.expand_dims(value, -1)
  if column.normalizer_fn is not None:
    value = column.normalizer_fn(value)
  return value


def weights_for(features: Mapping[str, Any], weight_column: Union[str, Any],
                logits: tf.Tensor,
                allow_per_logit_weights: bool = False) -> Any:
  """The example weights matching `logits`, or 1. without a weight column.

  Raises:
    TypeError: weight_column is neither a string nor a numeric column.
    ValueError: the weights are not numeric, or of a wrong static shape.
  """
  message = _PER_LOGIT if allow_per_logit_weights else _PER_EXAMPLE
  with tf.compat.v1.name_scope(
      "weights", values=tuple(features.values()) + (logits,)) as scope:
    if weight_column is None:
      return 1.
    if isinstance(weight_column, str):
      weight_column = tf.feature_column.numeric_column(
          key=weight_column, shape=(1,))
    if not isinstance(weight_column, _numeric_column_type()):
      raise TypeError(
          "Weight column must be either a string or NumericColumn. Given "
          f"type: {type(weight_column)}. Fix: pass the weight feature's name "
          "or tf.feature_column.numeric_column(name).")
    weights = _column_tensor(features, weight_column)
    if not (weights.dtype.is_floating or weights.dtype.is_integer):
      raise ValueError(
          "Weight column should be castable to float. Given dtype: "
          f"{weights.dtype}. Fix: feed numeric example weights.")
    weights = tf.cast(weights, name="weights", dtype=tf.float32)
    one_less = (weights.shape.rank is not None and logits.shape.rank is not None
                and weights.shape.rank == logits.shape.rank - 1)
    if tf.executing_eagerly():
      return _eager_weights(weights, logits, message, one_less,
                            allow_per_logit_weights, scope)
    weights_shape = tf.compat.v1.shape(weights, name="weights_shape")
    logits_shape = tf.compat.v1.shape(logits, name="logits_shape")
    data = ["logits_shape: ", logits_shape, "weights_shape: ", weights_shape]
    if one_less:
      check = tf.compat.v1.debugging.assert_equal(
          logits_shape[:-1], weights_shape, message=message, data=data)
      with tf.control_dependencies([check]):
        return tf.expand_dims(weights, -1, name=scope)
    per_example = tf.concat([logits_shape[:-1], [1]], axis=0)
    if allow_per_logit_weights:
      check = tf.debugging.Assert(
          tf.reduce_any([
              tf.reduce_all(tf.equal(logits_shape, weights_shape)),
              tf.reduce_all(tf.equal(per_example, weights_shape))]),
          data=[message] + data)
    else:
      check = tf.compat.v1.debugging.assert_equal(
          per_example, weights_shape, message=message, data=data)
    with tf.control_dependencies([check]):
      return tf.identity(weights, name=scope)


def _eager_weights(weights, logits, message, one_less, allow_per_logit, scope):
  weights_shape, logits_shape = tuple(weights.shape), tuple(logits.shape)
  error = ValueError(f"{message}, logits_shape: {logits_shape}. "
                     f"weights_shape: {weights_shape}.")
  if one_less:
    if logits_shape[:-1] != weights_shape:
      raise error
    return tf.expand_dims(weights, -1, name=scope)
  allowed = [logits_shape[:-1] + (1,)]
  if allow_per_logit:
    allowed.append(logits_shape)
  if weights_shape not in allowed:
    raise error
  return weights
