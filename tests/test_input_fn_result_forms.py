"""What an input_fn may return: pairs, features alone, Python values.

The Estimator split an input_fn's result (or its Dataset's element) with
`parse_input_fn_result`: a tuple or list of a length other than 2 raised
`ValueError("input_fn should return (features, labels) as a len 2
tuple.")`, checked with the real Estimator (TF 2.15) for a Dataset of
3-tuples.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as ec
from estimator_compat.export import supervised
from estimator_compat.front import input_adapter

_PAIR = "input_fn should return (features, labels) as a len 2 tuple."


def _model_fn(features, labels, mode):
  w = tf.compat.v1.get_variable("w", [], initializer=tf.zeros_initializer())
  predictions = features["x"] * w
  if mode == ec.ModeKeys.PREDICT:
    return ec.EstimatorSpec(mode, predictions=predictions)
  loss = tf.reduce_mean((predictions - labels) ** 2)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, tf.compat.v1.train.get_global_step())
  return ec.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _three_tuples():
  return tf.data.Dataset.from_tensors(
      ({"x": tf.constant([1.0])}, tf.constant([1.0]), tf.constant([2.0])))


def test_a_dataset_of_three_tuples_is_the_estimators_value_error(
    engine_name, tmp_path):
  est = ec.Estimator(_model_fn, model_dir=str(tmp_path))
  with pytest.raises(ValueError) as raised:
    est.train(_three_tuples, steps=1)
  message = str(raised.value)
  assert message.startswith(_PAIR), message
  assert "_three_tuples returned a Dataset of tuples of length 3" in message
  assert "Fix: return (features, labels)" in message
  assert not os.listdir(tmp_path) or not any(
      name.startswith("model.ckpt") for name in os.listdir(tmp_path))


def test_predict_on_a_dataset_of_three_tuples_raises_too(engine_name,
                                                         tmp_path):
  est = ec.Estimator(_model_fn, model_dir=str(tmp_path))
  est.train(lambda: ({"x": tf.constant([1.0])}, tf.constant([1.0])), steps=1)
  with pytest.raises(ValueError, match="len 2 tuple"):
    next(est.predict(_three_tuples))


def test_a_three_tuple_from_a_graph_is_rejected_before_splitting():
  with tf.Graph().as_default():
    with pytest.raises(ValueError) as raised:
      input_adapter.split_input((1, 2, 3), "my_input_fn")
  assert str(raised.value).startswith(_PAIR)
  assert "my_input_fn returned a tuple of length 3" in str(raised.value)


def test_a_supervised_receiver_from_an_input_fn_of_three_raises():
  def input_fn():
    return {"x": tf.constant([[1.0]])}, tf.constant([1.0]), tf.constant([2.0])
  with pytest.raises(ValueError, match="len 2 tuple"):
    supervised.build_supervised_input_receiver_fn_from_input_fn(input_fn)


def test_split_input_keeps_features_alone_and_rejects_a_string():
  with tf.Graph().as_default():
    features = {"x": tf.constant([1.0])}
    got, labels, hooks = input_adapter.split_input(features)
    assert got is features and labels is None and hooks == []
    array = np.ones([2])
    assert input_adapter.split_input(array)[0] is array
    with pytest.raises(TypeError) as raised:
      input_adapter.split_input("abc", "my_input_fn")
  message = str(raised.value)
  assert "my_input_fn returned str ('abc')" in message
  assert "Fix: return e.g. tf.data.Dataset.from_tensor_slices" in message


def test_python_values_become_tensors_and_tensor_structures_stay():
  features = {"x": [[1.0], [2.0]], "n": 3}
  labels = ((5.0,), (3.0,))
  got_features, got_labels = input_adapter.python_values_as_tensors(
      [features, labels])
  assert tf.is_tensor(got_features["x"]) and got_features["x"].shape == (2, 1)
  assert got_features["n"].dtype == tf.int32
  assert tf.is_tensor(got_labels) and got_labels.shape == (2, 1)
  held = (tf.constant(1.0), [1.0, 2.0])
  kept = input_adapter.python_values_as_tensors({"pair": held})["pair"]
  assert isinstance(kept, tuple) and kept[0] is held[0]
  assert tf.is_tensor(kept[1]) and kept[1].shape == (2,)
  table = object()
  assert input_adapter.python_values_as_tensors(
      ({"t": table}, None))[0]["t"] is table
  assert input_adapter.python_values_as_tensors("alone") == "alone"


def test_a_ragged_python_value_names_where_and_the_fix():
  with pytest.raises(TypeError) as raised:
    input_adapter.python_values_as_tensors(({"x": [[1.0], [2.0, 3.0]]}, None))
  message = str(raised.value)
  assert "input_fn returned features['x']" in message
  assert "cannot be a tensor" in message
  assert "Fix: give every row the same length and one type" in message


def test_three_feature_tensors_and_python_labels_still_train(engine_name,
                                                             tmp_path):
  # The function engine carries the tensors of a result holding Python
  # values as one flat tuple (here three); that tuple is not the input_fn's
  # result and must not be taken for a 3-tuple.
  def model_fn(features, labels, mode):
    total = features["x"] + features["y"] + features["z"]
    w = tf.compat.v1.get_variable("w", [], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean((total * w - tf.constant(labels)) ** 2)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, tf.compat.v1.train.get_global_step())
    return ec.EstimatorSpec(mode, loss=loss, train_op=train_op)

  def input_fn():
    return ({"x": tf.constant([1.0]), "y": tf.constant([2.0]),
             "z": tf.constant([3.0])}, [1.0])

  est = ec.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(input_fn, steps=2)
  assert est.get_variable_value("global_step") == 2


def test_a_keras_input_may_carry_sample_weights():
  # input_fn_to_dataset_fn feeds Keras, whose fit takes (x, y, weights).
  from estimator_compat.adapters.input_fns import input_fn_to_dataset_fn
  dataset = input_fn_to_dataset_fn(_three_tuples, ec.ModeKeys.TRAIN)()
  assert len(dataset.element_spec) == 3


def test_under_a_strategy_a_dataset_of_three_tuples_raises_too(tmp_path,
                                                               monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  config = ec.RunConfig(
      train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]))
  est = ec.Estimator(_model_fn, model_dir=str(tmp_path), config=config)
  with pytest.raises(ValueError, match="len 2 tuple"):
    est.train(_three_tuples, steps=1)
