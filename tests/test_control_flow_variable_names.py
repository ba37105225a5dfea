"""Variables a model_fn makes inside a tf.cond, named as in a TF1 graph.

A v1 optimizer makes its non-slot variables (Adam's `beta1_power`) under
init_scope. When apply_gradients runs inside a tf.cond (gradient
accumulation; tf.compat.v1.mixed_precision's loss scaling), TF 2.15 (run by
hand) named them `beta1_power`; the function engine named them
`cond/beta1_power`, since a cond branch there starts in the cond's name
scope (finding G34). Checkpoints then differed from the Estimator's in name.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

_X = (np.arange(32, dtype=np.float32).reshape(8, 4) / 32) - 0.4
_Y = np.array([[1.], [0.], [1.], [1.], [0.], [1.], [0.], [0.]], np.float32)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


def _accumulating_model_fn(features, labels, mode):
  """Adds up two batches' gradients, then applies them with Adam."""
  logits = tf.compat.v1.layers.dense(
      features["x"], 1, kernel_initializer=tf.compat.v1.ones_initializer())
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  global_step = tf.compat.v1.train.get_global_step()
  variables = tf.compat.v1.trainable_variables()
  sums = [tf.compat.v1.get_variable(
      v.name.split(":")[0].replace("/", "_") + "_sum", v.shape,
      initializer=tf.compat.v1.zeros_initializer(), trainable=False)
          for v in variables]
  added = [s.assign_add(g) for s, g in zip(sums, tf.gradients(loss, variables))]
  optimizer = tf.compat.v1.train.AdamOptimizer(0.1)

  def apply():
    step = optimizer.apply_gradients(
        [(s / 2.0, v) for s, v in zip(sums, variables)])
    with tf.control_dependencies([step]):
      return tf.group(*[s.assign(tf.zeros_like(s)) for s in sums])

  with tf.control_dependencies(added):
    applied = tf.cond(tf.equal(global_step % 2, 1), apply, tf.no_op)
  with tf.control_dependencies([applied]):
    train_op = tf.compat.v1.assign_add(global_step, 1)
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _trained(model_dir, engine):
  estimator = tfe.Estimator(_accumulating_model_fn, str(model_dir),
                            config=tfe.RunConfig(engine=engine))
  estimator.train(_input_fn, steps=3)
  estimator.train(_input_fn, steps=1)  # restores both by name
  return {name: estimator.get_variable_value(name)
          for name in estimator.get_variable_names()}


@pytest.mark.parametrize("engine", [None, "function"])
def test_non_slot_variables_made_in_a_cond_keep_their_tf1_names(engine,
                                                                tmp_path):
  values = _trained(tmp_path / "new", engine)
  graph_values = _trained(tmp_path / "graph", "graph")
  assert {"beta1_power", "beta2_power"} <= set(values)
  assert sorted(values) == sorted(graph_values)
  for name, value in values.items():
    np.testing.assert_array_equal(value, graph_values[name], err_msg=name)
  assert values["beta1_power"] == pytest.approx(0.9 ** 3)  # applied twice
