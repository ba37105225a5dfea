"""The function engine's input pipeline at its edges (input_pipeline.py).

What tf.data cannot carry (a list of tensors, no tensors at all) sends the
call to the graph engine; under a strategy, constant tensors are the same
batch at every step on each replica, and a TF1-only input (an initializable
iterator, which refuses eager execution) cannot be split across replicas.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as ec
from estimator_compat.errors import NeedsGraphEngine

X = np.arange(8, dtype=np.float32).reshape(4, 2)
Y = np.array([[0.0], [1.0], [1.0], [0.0]], np.float32)


def _model_fn(features, labels, mode):
  prediction = tf.compat.v1.layers.dense(features["x"], 1, name="out")
  targets = labels if not isinstance(labels, list) else labels[0]
  loss = tf.reduce_mean(tf.square(prediction - targets))
  if isinstance(labels, list):
    loss += tf.reduce_mean(tf.square(prediction - labels[1]))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return ec.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _list_of_labels():
  return {"x": tf.constant(X)}, [tf.constant(Y), tf.constant(1.0 - Y)]


def test_a_list_of_labels_needs_the_graph_engine(tmp_path, monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  est = ec.Estimator(_model_fn, model_dir=str(tmp_path / "f"))
  with pytest.raises(NeedsGraphEngine, match="a Python list of tensors"):
    est.train(_list_of_labels, steps=1)
  # The default engine takes it there and trains.
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE")
  est = ec.Estimator(_model_fn, model_dir=str(tmp_path / "d"))
  est.train(_list_of_labels, steps=2)
  assert est.get_variable_value("global_step") == 2


def test_no_tensors_at_all_needs_the_graph_engine(tmp_path, monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  est = ec.Estimator(_model_fn, model_dir=str(tmp_path))
  with pytest.raises(NeedsGraphEngine, match="returns no tensors"):
    est.train(lambda: ({}, None), steps=1)


def _strategy_estimator(model_dir):
  config = ec.RunConfig(
      train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]))
  return ec.Estimator(_model_fn, model_dir=str(model_dir), config=config)


def test_constant_tensors_under_a_strategy_repeat_each_step(tmp_path,
                                                            monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  est = _strategy_estimator(tmp_path)
  est.train(lambda: ({"x": tf.constant(X)}, tf.constant(Y)), steps=3)
  assert est.get_variable_value("global_step") == 3


def test_a_tf1_only_input_under_a_strategy_cannot_be_split(tmp_path,
                                                           monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")

  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat()
    iterator = tf.compat.v1.data.make_initializable_iterator(dataset)
    return iterator.get_next()

  with pytest.raises(ValueError, match="input_fn must return a "
                     "tf.data.Dataset or a callable.*cannot be split"):
    _strategy_estimator(tmp_path).train(input_fn, steps=1)
  assert tf.train.latest_checkpoint(str(tmp_path)) is None
