"""model_fn code that reads a variable's graph-only attributes.

The TF1 idiom `tf.compat.v1.summary.histogram(v.op.name, v)` and TF1 slot
creation for partitioned variables (a tf.compat.v1.train optimizer with
slots) read `variable.op`, which a TF1 graph always had and the function
engine's eagerly held variables do not. TF 2.15.1 + tensorflow-estimator
2.15.0 trained both programs (run by hand: variables, summary tags and the
checkpoint's names and shapes); the default engine runs such a call on the
graph engine, and engine='function' refuses it before any checkpoint.
"""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.errors import NeedsGraphEngine

_IDS = np.array([[1, 3], [0, 5], [2, 2], [4, 1]], np.int64)
_LABELS = np.array([[1.0], [0.0], [1.0], [0.0]], np.float32)


def _histogram_model_fn(features, labels, mode):
  out = tf.compat.v1.layers.dense(
      tf.cast(features["ids"], tf.float32), 1, name="o",
      kernel_initializer=tf.compat.v1.constant_initializer(0.5))
  for variable in tf.compat.v1.trainable_variables():
    tf.compat.v1.summary.histogram(variable.op.name, variable)
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, out)
  return tfe.EstimatorSpec(
      mode, loss=loss, train_op=tf.compat.v1.train.GradientDescentOptimizer(
          0.5).minimize(loss, tf.compat.v1.train.get_global_step()))


def _partitioned_model_fn(features, labels, mode):
  embeddings = tf.compat.v1.get_variable(
      "emb", [6, 3], initializer=tf.compat.v1.glorot_uniform_initializer(
          seed=3), partitioner=tf.compat.v1.fixed_size_partitioner(2))
  vectors = tf.reduce_mean(
      tf.compat.v1.nn.embedding_lookup(embeddings, features["ids"]), 1)
  out = tf.compat.v1.layers.dense(
      vectors, 1, name="o",
      kernel_initializer=tf.compat.v1.constant_initializer(0.5))
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, out)
  return tfe.EstimatorSpec(
      mode, loss=loss, predictions={"o": out},
      train_op=tf.compat.v1.train.AdagradOptimizer(0.5).minimize(
          loss, tf.compat.v1.train.get_global_step()))


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(
      ({"ids": _IDS}, _LABELS)).repeat().batch(2)


def _trained(model_fn, model_dir, engine=None):
  estimator = tfe.Estimator(model_fn, model_dir=str(model_dir),
                            config=tfe.RunConfig(tf_random_seed=1,
                                                 save_summary_steps=1,
                                                 engine=engine))
  estimator.train(_input_fn, steps=3)
  return estimator


def _values(estimator):
  return {name: estimator.get_variable_value(name)
          for name in estimator.get_variable_names()}


def _summary_tags(model_dir):
  tags = set()
  for path in glob.glob(os.path.join(str(model_dir), "events*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      tags.update(value.tag for value in event.summary.value)
  return tags


@pytest.mark.parametrize("model_fn", [_histogram_model_fn,
                                      _partitioned_model_fn])
def test_the_default_engine_trains_as_the_graph_engine(tmp_path, model_fn):
  ours = _values(_trained(model_fn, tmp_path / "default"))
  graph = _values(_trained(model_fn, tmp_path / "graph", engine="graph"))
  assert sorted(ours) == sorted(graph)
  for name, value in graph.items():
    np.testing.assert_array_equal(ours[name], value, err_msg=name)
  assert _summary_tags(tmp_path / "default") == _summary_tags(
      tmp_path / "graph")


def test_histograms_of_op_names_are_written_under_tf1s_tags(tmp_path):
  _trained(_histogram_model_fn, tmp_path)
  # TF 2.15's tags: the histogram ops' names were made unique in the graph.
  assert {"o/kernel_1", "o/bias_1", "loss"} <= _summary_tags(tmp_path)


def test_partitioned_slots_are_saved_under_tf1s_names(tmp_path):
  _trained(_partitioned_model_fn, tmp_path)
  shapes = dict(tf.train.list_variables(str(tmp_path)))
  assert shapes["emb"] == [6, 3]
  assert shapes["emb/Adagrad"] == [6, 3]
  assert shapes["o/kernel/Adagrad"] == [3, 1]


@pytest.mark.parametrize("model_fn, words", [
    (_histogram_model_fn, "variable.op.name"),
    (_partitioned_model_fn, "partitioned variables")])
def test_the_function_engine_refuses_before_any_checkpoint(tmp_path, model_fn,
                                                           words):
  with pytest.raises(NeedsGraphEngine, match=words) as raised:
    _trained(model_fn, tmp_path, engine="function")
  assert "engine='graph'" in str(raised.value)
  assert tf.train.latest_checkpoint(str(tmp_path)) is None
