"""Serving receivers validate as the Estimator's did (its wording, then a
fix), accept what it accepted, and build placeholders as it did.

Behaviour compared with tensorflow-estimator 2.15's export.py on TF 2.15.
"""

import pytest
import tensorflow as tf

import estimator_compat as tfe

_EXPORT = tfe.export


class _LabeledTensorLike:
  """Like LabeledTensor: holds `.tensor` and converts to a Tensor."""

  def __init__(self, tensor):
    self.tensor = tensor


tf.register_tensor_conversion_function(
    _LabeledTensorLike,
    lambda value, dtype=None, name=None, as_ref=False: tf.convert_to_tensor(
        value.tensor, dtype=dtype, name=name))


@pytest.fixture(name="graph")
def _graph():
  with tf.Graph().as_default() as graph:
    yield graph


@pytest.mark.usefixtures("graph")
@pytest.mark.parametrize("make, message", [
    (lambda t: _EXPORT.ServingInputReceiver(None, t),
     "features must be defined. Fix: "),
    (lambda t: _EXPORT.ServingInputReceiver(t, None),
     "receiver_tensors must be defined. Fix: "),
    (lambda t: _EXPORT.ServingInputReceiver({4.5: t}, t),
     "feature keys must be strings or ints: 4.5. Fix: "),
    (lambda t: _EXPORT.ServingInputReceiver(t, {1: t}),
     "receiver_tensor keys must be strings: 1. Fix: "),
    (lambda t: _EXPORT.ServingInputReceiver({"f1": [1]}, t),
     "feature f1 must be a Tensor, SparseTensor, or RaggedTensor. Got list. "
     "Fix: "),
    (lambda t: _EXPORT.ServingInputReceiver(t, {"e1": "text"}),
     "receiver_tensor e1 must be a Tensor"),
    (lambda t: _EXPORT.ServingInputReceiver(t, t, {"alt": None}),
     "receiver_tensors_alternatives must be defined"),
    (lambda t: _EXPORT.ServingInputReceiver(t, t, [t]),
     "receiver_tensors_alternatives must be a dict: .*Fix: "),
    (lambda t: _EXPORT.TensorServingInputReceiver(None, t),
     "features must be defined. Fix: "),
    (lambda t: _EXPORT.TensorServingInputReceiver({"a": t}, t),
     "feature must be a Tensor.*Fix: .*single Tensor"),
    (lambda t: _EXPORT.TensorServingInputReceiver(t, None),
     "receiver_tensors must be defined"),
])
def test_invalid_receivers_fail_with_the_estimators_words(make, message):
  tensor = tf.compat.v1.placeholder(tf.float32, [None, 2])
  with pytest.raises(ValueError, match=message):
    make(tensor)


def test_features_keyed_by_ints_and_labeled_tensors_are_accepted(graph):
  del graph
  tensor = tf.compat.v1.placeholder(tf.float32, [None, 2])
  sparse = tf.SparseTensor([[0, 0]], [1], [1, 1])
  ragged = tf.ragged.constant([[1, 2], [3]])
  labeled = _LabeledTensorLike(tf.constant([1]))
  receiver = _EXPORT.ServingInputReceiver(
      {"x": tensor, 42: tensor, "s": sparse, "r": ragged, "l": labeled},
      {"x": tensor})
  assert receiver.features[42] is tensor
  assert receiver.features["l"] is labeled  # Kept as given.
  single = _EXPORT.ServingInputReceiver(labeled, tensor)
  assert single.features == {"feature": labeled}
  assert _EXPORT.TensorServingInputReceiver(labeled, tensor).features is (
      labeled)


def test_raw_receiver_fn_keeps_unknown_shapes_and_sets_the_batch(graph):
  del graph
  receiver = _EXPORT.build_raw_serving_input_receiver_fn({
      "f1": tf.compat.v1.placeholder(tf.float32),
      "f2": tf.compat.v1.placeholder(tf.int32, [None, 3]),
  }, default_batch_size=5)()
  assert receiver.receiver_tensors["f1"].shape.rank is None
  assert receiver.receiver_tensors["f2"].shape.as_list() == [5, 3]
  assert receiver.features["f2"] is receiver.receiver_tensors["f2"]


def test_raw_receiver_fn_names_placeholders_as_the_estimator():
  # A graph tensor lends its op's name; an eager one has none.
  with tf.Graph().as_default():
    given = tf.compat.v1.placeholder(tf.float32, [None, 3], name="inp")
    receiver = _EXPORT.build_raw_serving_input_receiver_fn({"x": given})()
    assert receiver.receiver_tensors["x"].name == "inp_1:0"
  receiver_fn = _EXPORT.build_raw_serving_input_receiver_fn(
      {"x": tf.zeros([1, 3]), "my key": tf.zeros([1])})
  with tf.Graph().as_default():
    receiver = receiver_fn()
    names = sorted(t.name for t in receiver.receiver_tensors.values())
    assert names == ["Placeholder:0", "Placeholder_1:0"]
