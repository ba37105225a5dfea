"""Seeded initializers shared by several variables, and dynamic_rnn's scope.

TF 2.15.1 + tensorflow-estimator 2.15.0 (run by hand): a GRU cell under
`variable_scope(initializer=glorot_uniform_initializer(seed=5))` started
both of its kernels from the start of seed 5's stream, each initializer
being an op of its own. The function engine made them eagerly, where one
kernel per seed served both, so the second kernel started from other values
with no error. And `tf.compat.v1.nn.dynamic_rnn` gives its variables a
device function as caching device, which eager creation refused.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

_X = (np.arange(48, dtype=np.float32).reshape(6, 4, 2) / 48) ** 2
_Y = np.array([[1.], [0.], [1.], [0.], [1.], [0.]], np.float32)


def _shared_seed_model_fn(features, labels, mode, params):
  del labels, params  # A guard of TF1's semantics (it passed before the fix too).
  initializer = tf.compat.v1.glorot_uniform_initializer(seed=5)
  with tf.compat.v1.variable_scope("m", initializer=initializer):
    first = tf.compat.v1.get_variable("first", [5, 3])
    second = tf.compat.v1.get_variable("second", [5, 3])
  loss = tf.reduce_sum(features["x"][:, 0, :1] * (first[0, 0] + second[0, 0]))
  return tfe.EstimatorSpec(mode, loss=loss, train_op=tf.compat.v1.assign_add(
      tf.compat.v1.train.get_global_step(), 1))


def _gru_model_fn(features, labels, mode, params):
  initializer = tf.compat.v1.glorot_uniform_initializer(seed=5)
  with tf.compat.v1.variable_scope("rnn", initializer=initializer):
    _, state = tf.compat.v1.nn.dynamic_rnn(
        tf.compat.v1.nn.rnn_cell.GRUCell(3), features["x"], dtype=tf.float32)
  logits = tf.compat.v1.layers.dense(
      state, 1, kernel_initializer=tf.compat.v1.glorot_uniform_initializer(
          seed=6))
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  return tfe.EstimatorSpec(
      mode, loss=loss, train_op=tf.compat.v1.train.AdamOptimizer(
          params["learning_rate"]).minimize(
              loss, tf.compat.v1.train.get_global_step()))


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(3)


def _trained(model_fn, model_dir, engine, learning_rate=0.05):
  estimator = tfe.Estimator(model_fn, model_dir=str(model_dir),
                            params={"learning_rate": learning_rate},
                            config=tfe.RunConfig(tf_random_seed=1,
                                                 engine=engine))
  estimator.train(_input_fn, steps=3)
  return {name: estimator.get_variable_value(name)
          for name in estimator.get_variable_names()}


def test_one_seeded_initializer_starts_each_variable_afresh(tmp_path):
  ours = _trained(_shared_seed_model_fn, tmp_path / "function", "function")
  # As in a TF1 graph: the same seed, the same shape, the same values.
  np.testing.assert_array_equal(ours["m/first"], ours["m/second"])
  graph = _trained(_shared_seed_model_fn, tmp_path / "graph", "graph")
  np.testing.assert_array_equal(ours["m/second"], graph["m/second"])


def test_a_gru_cells_kernels_start_from_tf1s_values(tmp_path):
  # Its gates' kernel, its gates' (constant) bias, then its candidate's
  # kernel, from one seeded initializer: the second kernel differed.
  ours = _trained(_gru_model_fn, tmp_path / "function", "function", 0.0)
  graph = _trained(_gru_model_fn, tmp_path / "graph", "graph", 0.0)
  name = "rnn/rnn/gru_cell/candidate/kernel"
  np.testing.assert_array_equal(ours[name], graph[name])


@pytest.mark.parametrize("engine", ["function", None])
def test_dynamic_rnn_trains_on_the_function_engine(tmp_path, engine):
  ours = _trained(_gru_model_fn, tmp_path / "ours", engine)
  graph = _trained(_gru_model_fn, tmp_path / "graph", "graph")
  assert sorted(ours) == sorted(graph)
  for name, value in graph.items():
    # Only the two engines' gradient loops may round differently.
    np.testing.assert_allclose(ours[name], value, rtol=1e-5, atol=1e-7,
                               err_msg=name)
