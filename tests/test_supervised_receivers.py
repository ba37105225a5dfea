"""SupervisedInputReceiver, UnsupervisedInputReceiver and the supervised
receiver_fn builders, as the Estimator's export.export had them.

Expected names and shapes were read from tensorflow-estimator 2.15 on TF 2.15.
"""

import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.export import supervised


@pytest.fixture(name="graph")
def _graph():
  with tf.Graph().as_default() as graph:
    yield graph


@pytest.mark.usefixtures("graph")
def test_supervised_receiver_keeps_features_and_labels_as_given():
  x = tf.compat.v1.placeholder(tf.float32, [None, 2])
  y = tf.compat.v1.placeholder(tf.int64, [None])
  receiver = supervised.SupervisedInputReceiver(x, {"y": y, 7: y}, x)
  assert receiver.features is x
  assert receiver.labels == {"y": y, 7: y}
  assert receiver.receiver_tensors == {"input": x}
  assert receiver._fields == ("features", "labels", "receiver_tensors")


@pytest.mark.usefixtures("graph")
@pytest.mark.parametrize("kwargs, message", [
    (dict(features=None), "features must be defined. Fix: "),
    (dict(labels=None), "labels must be defined. Fix: "),
    (dict(receiver_tensors=None), "receiver_tensors must be defined"),
    (dict(labels={1.5: "y"}), "label keys must be strings or ints: 1.5"),
    (dict(features=[1]), "feature feature must be a Tensor, SparseTensor, "
     "or RaggedTensor. Got list. Fix: "),
    (dict(labels=100), "label label must be a Tensor"),
    (dict(receiver_tensors={1: "x"}), "receiver_tensor keys must be strings"),
])
def test_supervised_receiver_validation(kwargs, message):
  x = tf.compat.v1.placeholder(tf.float32, [None, 2])
  args = dict(features=x, labels=x, receiver_tensors=x)
  args.update(kwargs)
  with pytest.raises(ValueError, match=message):
    supervised.SupervisedInputReceiver(**args)


@pytest.mark.usefixtures("graph")
def test_unsupervised_receiver_is_a_serving_receiver_without_alternatives():
  x = tf.compat.v1.placeholder(tf.float32, [None, 2])
  receiver = supervised.UnsupervisedInputReceiver({"x": x, 3: x}, x)
  assert isinstance(receiver, tfe.export.ServingInputReceiver)
  assert receiver.receiver_tensors == {"input": x}
  assert receiver.receiver_tensors_alternatives is None
  with pytest.raises(ValueError, match="features must be defined"):
    supervised.UnsupervisedInputReceiver(None, x)


def test_raw_supervised_receiver_fn_dicts_and_single_tensors():
  features = {"f1": tf.constant(["a"]), "f2": tf.constant([[1, 2]])}
  labels = {"foo": tf.constant([5]), "bar": tf.constant([6.0])}
  dicts = supervised.build_raw_supervised_input_receiver_fn(
      features, labels, default_batch_size=10)
  single = supervised.build_raw_supervised_input_receiver_fn(
      features["f2"], labels["foo"])
  with tf.Graph().as_default():
    receiver = dicts()
    assert sorted(receiver.receiver_tensors) == ["bar", "f1", "f2", "foo"]
    assert receiver.features["f2"] is receiver.receiver_tensors["f2"]
    assert receiver.labels["bar"].dtype == tf.float32
    assert receiver.features["f2"].shape.as_list() == [10, 2]
  with tf.Graph().as_default():
    receiver = single()
    assert sorted(receiver.receiver_tensors) == ["input", "label"]
    assert receiver.features is receiver.receiver_tensors["input"]
    assert receiver.features.shape.as_list() == [None, 2]
    assert receiver.labels.name == "Placeholder_1:0"  # As the Estimator's.


@pytest.mark.parametrize("features, labels, overlap", [
    ({"a": 1, "b": 2}, {"a": 3}, "{'a'}"),
    ("tensor", {"input": 3}, "{'input'}"),
    ({"label": 1}, "tensor", "{'label'}"),
])
def test_raw_supervised_receiver_fn_refuses_shared_keys(features, labels,
                                                        overlap):
  with pytest.raises(ValueError, match="Features and labels must have "
                     f"distinct keys. Found overlapping keys: {overlap}. "
                     "Fix: "):
    supervised.build_raw_supervised_input_receiver_fn(features, labels)


def test_receiver_fn_from_input_fn_takes_its_shapes_and_arguments():

  def input_fn(key="x"):
    return tf.data.Dataset.from_tensors(
        ({key: tf.zeros([4, 3]), "y": tf.constant(["a"] * 4)},
         tf.zeros([4], tf.int64))).repeat().unbatch().batch(2)

  receiver_fn = supervised.build_supervised_input_receiver_fn_from_input_fn(
      input_fn, key="z")
  with tf.Graph().as_default():
    receiver = receiver_fn()
    shapes = {key: (tensor.shape.as_list(), tensor.dtype)
              for key, tensor in receiver.receiver_tensors.items()}
  assert shapes == {"z": ([None, 3], tf.float32), "y": ([None], tf.string),
                    "label": ([None], tf.int64)}
  assert sorted(receiver.features) == ["y", "z"]


def test_receiver_fn_from_input_fn_without_labels_fails_with_the_fix():
  with pytest.raises(ValueError, match="needs labels.*Fix: "):
    supervised.build_supervised_input_receiver_fn_from_input_fn(
        lambda: {"x": tf.zeros([2, 3])})


def test_experimental_names_what_it_lacks():
  assert (tfe.experimental.build_raw_supervised_input_receiver_fn is
          supervised.build_raw_supervised_input_receiver_fn)
  # Every TF 2.15 name is offered now (issue 24): LinearSDCA among them.
  from estimator_compat.canned import linear  # pylint: disable=g-import-not-at-top
  assert tfe.experimental.LinearSDCA is linear.LinearSDCA
  with pytest.raises(AttributeError, match="no attribute 'nothing'"):
    tfe.experimental.nothing  # pylint: disable=pointless-statement
