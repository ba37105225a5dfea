"""A custom tf.compat.v1.train.Optimizer with a non-slot variable.

Optimizers written for TF1 (as Adam once was) look their non-slot variables
up with `self._get_non_slot_variable(name, graph=tf.compat.v1.
get_default_graph())` outside an init_scope. TF 2.15 (run by hand) found
them in its TF1 graph; on the function engine the lookup found None, and
model_fn failed with `ValueError: Tried to convert 'y' to a tensor and
failed. Error: None values not supported.` (finding G33).
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

# TensorFlow's own lookup, taken before any trace.
_TF_LOOKUP = tf.compat.v1.train.Optimizer._get_non_slot_variable  # pylint: disable=protected-access
_X = (np.arange(32, dtype=np.float32).reshape(8, 4) / 32) - 0.4
_Y = np.array([[1.], [0.], [1.], [1.], [0.], [1.], [0.], [0.]], np.float32)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


class _DampedOptimizer(tf.compat.v1.train.Optimizer):
  """SGD whose step halves after each update (a non-slot `power`)."""

  def __init__(self, learning_rate):
    super().__init__(False, "Damped")
    self._learning_rate = learning_rate

  def _create_slots(self, var_list):
    self._create_non_slot_variable(initial_value=1.0, name="power",
                                   colocate_with=var_list[0])

  def _power(self):
    # The TF1 idiom: the default graph, not an init_scope.
    graph = (None if tf.executing_eagerly()
             else tf.compat.v1.get_default_graph())
    return self._get_non_slot_variable("power", graph=graph)

  def _resource_apply_dense(self, grad, var):
    return var.assign_sub(self._learning_rate * self._power() * grad)

  def _finish(self, update_ops, name_scope):
    with tf.control_dependencies(update_ops):
      power = self._power()
      halved = power.assign(power * 0.5)
    return tf.group(*update_ops, halved, name=name_scope)


def _model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(
      features["x"], 1, kernel_initializer=tf.compat.v1.ones_initializer())
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  train_op = _DampedOptimizer(0.5).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _trained(model_dir, engine):
  estimator = tfe.Estimator(_model_fn, str(model_dir),
                            config=tfe.RunConfig(engine=engine))
  estimator.train(_input_fn, steps=2)
  estimator.train(_input_fn, steps=1)  # restores `power`
  return {name: estimator.get_variable_value(name)
          for name in estimator.get_variable_names()}


@pytest.mark.parametrize("engine", [None, "function"])
def test_non_slot_variables_are_found_as_in_a_tf1_graph(engine, tmp_path):
  values = _trained(tmp_path / "new", engine)
  graph_values = _trained(tmp_path / "graph", "graph")
  assert values["power"] == 0.125  # halved after each of 3 steps
  assert sorted(values) == sorted(graph_values)
  for name, value in values.items():
    np.testing.assert_array_equal(value, graph_values[name], err_msg=name)
  # The lookup is TF's own again outside the trace.
  assert tf.compat.v1.train.Optimizer._get_non_slot_variable is _TF_LOOKUP  # pylint: disable=protected-access
