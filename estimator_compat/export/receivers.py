"""Serving input receivers: what a serving_input_receiver_fn returns.

Legacy receiver functions are graph code (`tf.compat.v1.placeholder`,
`tf.io.parse_example`); they run as written, because export always builds a
TF1 graph (whichever engine trained the checkpoint).

Validation follows the Estimator's rules and wording (legacy code and tests
match it), each message followed by a fix: features may be keyed by strings
or ints, receiver tensors only by strings; values must be a Tensor,
SparseTensor or RaggedTensor, or (as the Estimator's carve-out for
LabeledTensor) an object with a `.tensor` that converts to a Tensor.
"""

import collections
from typing import Any, Callable, Dict, Optional

import tensorflow as tf

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"
SINGLE_LABEL_DEFAULT_NAME = "label"

# The key a single (non-dict) value is wrapped under, by field name.
_DEFAULT_KEYS = {
    "feature": SINGLE_FEATURE_DEFAULT_NAME,
    "label": SINGLE_LABEL_DEFAULT_NAME,
    "receiver_tensor": SINGLE_RECEIVER_DEFAULT_NAME,
    "receiver_tensors_alternative": SINGLE_RECEIVER_DEFAULT_NAME,
}
_TENSOR_FIX = ("Fix: pass tensors of the receiver's graph, e.g. from "
               "tf.compat.v1.placeholder or tf.io.parse_example (convert "
               "other values with tf.convert_to_tensor).")


def check_tensor(tensor: Any, name: Any, field: str,
                 fix: str = _TENSOR_FIX) -> None:
  """Raises ValueError unless `tensor` is a value a receiver can hold.

  Args:
    tensor: the value to check.
    name: its key, or None for a value that is not in a dict.
    field: what it is ("feature", "label", "receiver_tensor", ...).
    fix: the sentence that tells how to fix it.
  """
  if isinstance(tensor, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor)):
    return
  if hasattr(tensor, "tensor"):  # LabeledTensor-like, as the Estimator.
    try:
      tf.convert_to_tensor(tensor)
      return
    except (TypeError, ValueError):
      pass
  label = field if name is None else f"{field} {name}"
  raise ValueError(
      f"{label} must be a Tensor, SparseTensor, or RaggedTensor. Got "
      f"{type(tensor).__name__}. {fix}")


def _check_key(name: Any, field: str, allow_int_keys: bool) -> None:
  if isinstance(name, str):
    return
  if not allow_int_keys:
    raise ValueError(f"{field} keys must be strings: {name}. Fix: key each "
                     f"{field} by a string; it names a signature input.")
  if not isinstance(name, int):
    raise ValueError(f"{field} keys must be strings or ints: {name}. Fix: "
                     f"key each {field} by a string or an int.")


def wrap_and_check_input_tensors(tensors: Any, field: str,
                                 allow_int_keys: bool = False
                                 ) -> Dict[Any, Any]:
  """`tensors` as a dict (a single value keyed by its default name), checked.

  Args:
    tensors: a tensor, or a dict of them.
    field: "feature", "label", "receiver_tensor" or
      "receiver_tensors_alternative"; it names the value in errors.
    allow_int_keys: whether int keys are allowed besides strings.

  Raises:
    ValueError: `tensors` is None, a key is not allowed, or a value is not a
      tensor.
  """
  if tensors is None:
    raise ValueError(
        f"{field}s must be defined. Fix: pass a Tensor, SparseTensor, "
        f"RaggedTensor, or a dict of them as the {field}s.")
  if not isinstance(tensors, dict):
    tensors = {_DEFAULT_KEYS[field]: tensors}
  for name, tensor in tensors.items():
    _check_key(name, field, allow_int_keys)
    check_tensor(tensor, name, field)
  return tensors


class ServingInputReceiver(collections.namedtuple(
    "ServingInputReceiver",
    ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
  """Features for the model_fn, and the tensors a serving request feeds.

  A single features tensor is wrapped as {"feature": tensor}; a single
  receiver tensor as {"input": tensor}. Feature keys may be strings or ints;
  receiver tensors (signature inputs) are keyed by strings.
  """

  def __new__(cls, features: Any, receiver_tensors: Any,
              receiver_tensors_alternatives: Optional[Dict[str, Any]] = None):
    features = wrap_and_check_input_tensors(features, "feature",
                                            allow_int_keys=True)
    receiver_tensors = wrap_and_check_input_tensors(receiver_tensors,
                                                    "receiver_tensor")
    if receiver_tensors_alternatives is not None:
      if not isinstance(receiver_tensors_alternatives, dict):
        raise ValueError(
            "receiver_tensors_alternatives must be a dict: "
            f"{receiver_tensors_alternatives}. Fix: map each alternative "
            "signature's name to its receiver tensors.")
      receiver_tensors_alternatives = {
          name: wrap_and_check_input_tensors(group,
                                             "receiver_tensors_alternative")
          for name, group in receiver_tensors_alternatives.items()}
    return super().__new__(cls, features, receiver_tensors,
                           receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple(
    "TensorServingInputReceiver",
    ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
  """Like ServingInputReceiver, but passes one features Tensor unwrapped."""

  def __new__(cls, features: Any, receiver_tensors: Any,
              receiver_tensors_alternatives: Optional[Dict[str, Any]] = None):
    if features is None:
      raise ValueError(
          "features must be defined. Fix: pass the single Tensor or "
          "SparseTensor the model_fn takes as its features.")
    check_tensor(features, None, "feature",
                 fix="Fix: TensorServingInputReceiver takes a single Tensor "
                 "or SparseTensor; use ServingInputReceiver for a dict.")
    wrapped = ServingInputReceiver(features, receiver_tensors,
                                   receiver_tensors_alternatives)
    return super().__new__(cls, features, wrapped.receiver_tensors,
                           wrapped.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(
    feature_spec: Dict[str, Any],
    default_batch_size: Optional[int] = None) -> Callable[[], Any]:
  """A receiver_fn that parses serialized tf.Example protos.

  The request feeds `examples`, a string tensor of serialized tf.Examples.
  """
  def serving_input_receiver_fn():
    serialized = tf.compat.v1.placeholder(
        dtype=tf.string, shape=[default_batch_size],
        name="input_example_tensor")
    features = tf.io.parse_example(serialized, feature_spec)
    return ServingInputReceiver(features, {"examples": serialized})
  return serving_input_receiver_fn


def placeholder_like(tensor: Any, default_batch_size: Optional[int] = None):
  """A placeholder with `tensor`'s dtype and shape, batch dimension replaced.

  As the Estimator, it takes the name of `tensor`'s op (TensorFlow makes it
  unique), or the default "Placeholder" for an eager tensor, which has no
  op; a tensor of unknown rank gives a placeholder of unknown shape.
  """
  shape = tf.TensorShape([default_batch_size]).concatenate(
      tensor.get_shape()[1:])
  try:
    name = tensor.op.name
  except AttributeError:  # An eager tensor.
    name = None
  return tf.compat.v1.placeholder(dtype=tensor.dtype, shape=shape, name=name)


def build_raw_serving_input_receiver_fn(
    features: Any, default_batch_size: Optional[int] = None
) -> Callable[[], Any]:
  """A receiver_fn that feeds raw tensors shaped like `features`.

  Each feature becomes a placeholder of its dtype and shape, with the batch
  dimension set to `default_batch_size`; the request feeds it under the
  feature's key. A single tensor (not a dict) gives a
  TensorServingInputReceiver fed under "feature".
  """
  def serving_input_receiver_fn():
    single = not isinstance(features, dict)
    items = {SINGLE_FEATURE_DEFAULT_NAME: features} if single else features
    receivers = {name: placeholder_like(tensor, default_batch_size)
                 for name, tensor in items.items()}
    if single:
      return TensorServingInputReceiver(receivers[SINGLE_FEATURE_DEFAULT_NAME],
                                        receivers)
    return ServingInputReceiver(receivers.copy(), receivers)
  return serving_input_receiver_fn
