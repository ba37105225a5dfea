"""A SavedModel loaded inside model_fn (a TF2 module, as TF-Hub models are).

TF 2.15.1 + tensorflow-estimator 2.15.0 (run by hand) loaded its variables
into GLOBAL_VARIABLES only, so `minimize()` with no var_list left them as
loaded while it trained the rest, and the checkpoint held both. The function
engine put them in TRAINABLE_VARIABLES too and trained them, with no error.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from tests import models

_X = np.ones((8, 4), np.float32)
_Y = np.ones((8, 1), np.float32)


class _Module(tf.Module):

  def __init__(self):
    super().__init__()
    self.w = tf.Variable(np.full((4, 2), 0.5, np.float32), name="w")

  @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
  def __call__(self, x):
    return tf.matmul(x, self.w)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
  path = str(tmp_path_factory.mktemp("module"))
  tf.saved_model.save(_Module(), path)
  return path


def _model_fn(path):

  def model_fn(features, labels, mode):
    hidden = tf.saved_model.load(path)(features["x"])
    logits = tf.compat.v1.layers.dense(
        hidden, 1, kernel_initializer=tf.compat.v1.ones_initializer())
    return models.binary_sgd_spec(mode, labels, logits, learning_rate=0.05)

  return model_fn


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


@pytest.mark.parametrize("engine", ["function", "graph"])
def test_loaded_variables_are_saved_but_not_trained(engine, saved, tmp_path):
  estimator = tfe.Estimator(_model_fn(saved), str(tmp_path),
                            config=tfe.RunConfig(engine=engine))
  estimator.train(_input_fn, steps=2)
  np.testing.assert_array_equal(estimator.get_variable_value("w"),
                                np.full((4, 2), 0.5, np.float32))
  # The dense layer trained: TF 2.15's value after these two steps.
  np.testing.assert_allclose(estimator.get_variable_value("dense/kernel"),
                             np.full((2, 1), 1.003583, np.float32),
                             rtol=1e-5)
