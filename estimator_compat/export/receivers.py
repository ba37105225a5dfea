"""Serving input receivers: what a serving_input_receiver_fn returns.

Legacy receiver functions are graph code (`tf.compat.v1.placeholder`,
`tf.io.parse_example`); they run as written, because export always builds a
TF1 graph (whichever engine trained the checkpoint).
"""

import collections
from typing import Any, Callable, Dict, Optional

import tensorflow as tf

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"
SINGLE_LABEL_DEFAULT_NAME = "label"


def _wrap_and_check(tensors: Any, field: str, default_name: str,
                    allow_none: bool = False) -> Optional[Dict[str, Any]]:
  if tensors is None and allow_none:
    return None
  if not isinstance(tensors, dict):
    tensors = {default_name: tensors}
  for name, tensor in tensors.items():
    if not isinstance(name, str):
      raise ValueError(f"{field} keys must be strings: {name!r}.")
    if not (isinstance(tensor, (tf.Tensor, tf.SparseTensor)) or
            tf.is_tensor(tensor)):
      raise ValueError(
          f"{field} must be a Tensor, SparseTensor, or a dict of them; "
          f"{field}[{name!r}] is {type(tensor).__name__}.")
  return tensors


class ServingInputReceiver(collections.namedtuple(
    "ServingInputReceiver",
    ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
  """Features for the model_fn, and the tensors a serving request feeds.

  A single features tensor is wrapped as {"feature": tensor}; a single
  receiver tensor as {"input": tensor}.
  """

  def __new__(cls, features: Any, receiver_tensors: Any,
              receiver_tensors_alternatives: Optional[Dict[str, Any]] = None):
    features = _wrap_and_check(features, "features",
                               SINGLE_FEATURE_DEFAULT_NAME)
    receiver_tensors = _wrap_and_check(receiver_tensors, "receiver_tensors",
                                       SINGLE_RECEIVER_DEFAULT_NAME)
    if receiver_tensors_alternatives is not None:
      if not isinstance(receiver_tensors_alternatives, dict):
        raise ValueError(
            "receiver_tensors_alternatives must be a dict of receiver tensor "
            f"groups, got {type(receiver_tensors_alternatives).__name__}.")
      receiver_tensors_alternatives = {
          name: _wrap_and_check(group, "receiver_tensors_alternatives",
                                SINGLE_RECEIVER_DEFAULT_NAME)
          for name, group in receiver_tensors_alternatives.items()}
    return super().__new__(cls, features, receiver_tensors,
                           receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple(
    "TensorServingInputReceiver",
    ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
  """Like ServingInputReceiver, but passes one features Tensor unwrapped."""

  def __new__(cls, features: Any, receiver_tensors: Any,
              receiver_tensors_alternatives: Optional[Dict[str, Any]] = None):
    if features is None or isinstance(features, dict):
      raise ValueError(
          "TensorServingInputReceiver features must be a single Tensor or "
          "SparseTensor. Fix: use ServingInputReceiver for a dict.")
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


def build_raw_serving_input_receiver_fn(
    features: Any, default_batch_size: Optional[int] = None
) -> Callable[[], Any]:
  """A receiver_fn that feeds raw tensors shaped like `features`.

  Each feature becomes a placeholder named after its key, with the batch
  dimension set to `default_batch_size`.
  """
  def serving_input_receiver_fn():
    receivers = {}
    single = not isinstance(features, dict)
    items = {SINGLE_FEATURE_DEFAULT_NAME: features} if single else features
    for name, tensor in items.items():
      shape = [default_batch_size] + tensor.shape.as_list()[1:]
      receivers[name] = tf.compat.v1.placeholder(
          dtype=tensor.dtype, shape=shape, name=name)
    if single:
      return TensorServingInputReceiver(receivers[SINGLE_FEATURE_DEFAULT_NAME],
                                        receivers)
    return ServingInputReceiver(receivers.copy(), receivers)
  return serving_input_receiver_fn
