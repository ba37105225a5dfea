"""A constant initializer whose size differs from the variable's shape.

A TF1 graph filled a shorter value by repeating its last element and raised
ValueError for a longer one (TF 2.15.1 + tensorflow-estimator 2.15.0, run
by hand: [1., 2.] for a shape [3] variable trained from [1., 2., 2.]).
Eager execution refuses both with a TypeError, so the function engine
sends such a call to the graph engine.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.errors import NeedsGraphEngine


def _model_fn(value):
  def model_fn(features, labels, mode):
    del labels
    v = tf.compat.v1.get_variable(
        "v", [3], initializer=tf.compat.v1.constant_initializer(value))
    return tfe.EstimatorSpec(
        mode, loss=tf.reduce_sum(v * features["x"]),
        train_op=tf.compat.v1.assign_add(
            tf.compat.v1.train.get_global_step(), 1))
  return model_fn


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(
      ({"x": [[1.0, 2.0, 3.0]]}, [0])).repeat().batch(1)


def test_the_default_engine_gives_the_graphs_values(tmp_path):
  short = tfe.Estimator(_model_fn([1.0, 2.0]), model_dir=str(tmp_path / "a"))
  short.train(_input_fn, steps=1)
  np.testing.assert_array_equal(short.get_variable_value("v"),
                                [1.0, 2.0, 2.0])
  long = tfe.Estimator(_model_fn([1.0, 2.0, 3.0, 4.0]),
                       model_dir=str(tmp_path / "b"))
  with pytest.raises(ValueError, match="^Too many elements provided"):
    long.train(_input_fn, steps=1)


def test_the_function_engine_refuses_it_loudly(tmp_path, monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  est = tfe.Estimator(_model_fn([1.0, 2.0]), model_dir=str(tmp_path))
  with pytest.raises(NeedsGraphEngine, match="'v' is initialized with a "
                     "constant of another number of elements.*engine='graph'"):
    est.train(_input_fn, steps=1)
  assert not tf.io.gfile.glob(str(tmp_path / "model.ckpt-*"))
