"""Two saved variables asked for under one name in a model_fn.

TF 2.15.1 + tensorflow-estimator 2.15.0 (run by hand) made the second name
unique in its TF1 graph: two tf-keras layers named `fc` gave `fc/kernel` and
`fc_1/kernel`; a tf-keras `Dense` and a `tf.compat.v1.layers.dense` (both
`dense`) gave `dense/kernel` and `dense/kernel_1`. The function engine made
both eager variables under the name asked for, so its checkpoint held one of
them and evaluate() restored it into both, with no error (finding G30). Such
a call now runs on the graph engine.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.errors import NeedsGraphEngine
from tests import models

_X = (np.arange(32, dtype=np.float32).reshape(8, 4) / 32) - 0.4
_Y = np.array([[1.], [0.], [1.], [1.], [0.], [1.], [0.], [0.]], np.float32)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


def _two_keras_layers_named_fc(x):
  hidden = tf.keras.layers.Dense(
      4, name="fc", kernel_initializer=tf.keras.initializers.Constant(0.2))(x)
  return tf.keras.layers.Dense(
      1, name="fc",
      kernel_initializer=tf.keras.initializers.Constant(0.3))(hidden)


def _keras_and_v1_layers_named_dense(x):
  hidden = tf.keras.layers.Dense(
      4, kernel_initializer=tf.keras.initializers.Constant(0.2))(x)
  return tf.compat.v1.layers.dense(
      hidden, 1, kernel_initializer=tf.compat.v1.constant_initializer(0.3))


# TF 2.15's checkpoint names for each model (run by hand).
_CASES = {
    "keras_keras": (_two_keras_layers_named_fc,
                    ["fc/bias", "fc/kernel", "fc_1/bias", "fc_1/kernel"]),
    "keras_v1": (_keras_and_v1_layers_named_dense,
                 ["dense/bias", "dense/bias_1", "dense/kernel",
                  "dense/kernel_1"]),
}


def _model_fn(features, labels, mode, params):
  logits = _CASES[params["case"]][0](features["x"])
  spec = models.binary_sgd_spec(mode, labels, logits)
  # A tf-keras metric's variables are not saved: their names may meet.
  first, second = tf.keras.metrics.Mean("m"), tf.keras.metrics.Mean("m")
  first.update_state(logits)
  second.update_state(labels)
  return spec._replace(eval_metric_ops={"logits": first, "labels": second})


def _run(model_dir, case, engine):
  estimator = tfe.Estimator(_model_fn, str(model_dir),
                            config=tfe.RunConfig(engine=engine),
                            params={"case": case})
  estimator.train(_input_fn, steps=3)
  return estimator.evaluate(_input_fn, steps=2), {
      name: estimator.get_variable_value(name)
      for name in estimator.get_variable_names()}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_the_default_engine_saves_both_under_tf1_names(case, tmp_path):
  metrics, values = _run(tmp_path / "default", case, None)
  graph_metrics, graph_values = _run(tmp_path / "graph", case, "graph")
  assert sorted(values) == sorted(_CASES[case][1] + ["global_step"])
  assert metrics == graph_metrics
  for name, value in values.items():
    np.testing.assert_array_equal(value, graph_values[name], err_msg=name)
  # Two layers, two sets of values: the output layer's kernel is 1 column.
  kernels = [values[name] for name in _CASES[case][1] if "kernel" in name]
  assert sorted(kernel.shape for kernel in kernels) == [(4, 1), (4, 4)]


@pytest.mark.parametrize("case", sorted(_CASES))
def test_the_function_engine_refuses_before_any_file(case, tmp_path):
  estimator = tfe.Estimator(_model_fn, str(tmp_path),
                            config=tfe.RunConfig(engine="function"),
                            params={"case": case})
  with pytest.raises(NeedsGraphEngine, match="makes a second variable named "
                     "'(fc|dense)/(kernel|bias)'.*only one of them"):
    estimator.train(_input_fn, steps=1)
  assert not list(tmp_path.glob("model.ckpt*"))


def test_distinct_names_stay_on_the_function_engine(tmp_path):
  def model_fn(features, labels, mode):
    hidden = tf.keras.layers.Dense(4, name="fc")(features["x"])
    logits = tf.keras.layers.Dense(1, name="out")(hidden)
    spec = models.binary_sgd_spec(mode, labels, logits)
    first, second = tf.keras.metrics.Mean("m"), tf.keras.metrics.Mean("m")
    first.update_state(logits)
    second.update_state(labels)
    return spec._replace(eval_metric_ops={"logits": first, "labels": second})

  estimator = tfe.Estimator(model_fn, str(tmp_path),
                            config=tfe.RunConfig(engine="function"))
  estimator.train(_input_fn, steps=1)
  metrics = estimator.evaluate(_input_fn, steps=2)
  assert metrics["labels"] == pytest.approx(_Y.mean())
  assert sorted(estimator.get_variable_names()) == [
      "fc/bias", "fc/kernel", "global_step", "out/bias", "out/kernel"]


def _two_adam_model_fn(features, labels, mode):
  """A GAN-style model_fn: two v1 Adams, each with its own beta1_power."""
  with tf.compat.v1.variable_scope("g"):
    hidden = tf.compat.v1.layers.dense(
        features["x"], 4, kernel_initializer=tf.compat.v1.ones_initializer())
  with tf.compat.v1.variable_scope("d"):
    logits = tf.compat.v1.layers.dense(
        hidden, 1, kernel_initializer=tf.compat.v1.constant_initializer(0.2))
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  scope_vars = lambda name: tf.compat.v1.get_collection(  # noqa: E731
      tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, name)
  d_step = tf.compat.v1.train.AdamOptimizer(0.1).minimize(
      loss, var_list=scope_vars("d"),
      global_step=tf.compat.v1.train.get_global_step())
  with tf.control_dependencies([d_step]):  # one order, as in a GAN loop
    g_step = tf.compat.v1.train.AdamOptimizer(0.05).minimize(
        -loss, var_list=scope_vars("g"))
  return tfe.EstimatorSpec(mode, loss=loss, train_op=tf.group(d_step, g_step))


def test_two_v1_optimizers_keep_both_non_slot_variables(tmp_path):
  def run(engine):
    estimator = tfe.Estimator(_two_adam_model_fn, str(tmp_path / str(engine)),
                              config=tfe.RunConfig(engine=engine))
    estimator.train(_input_fn, steps=2)
    estimator.train(_input_fn, steps=1)  # restores both beta1_powers
    return {name: estimator.get_variable_value(name)
            for name in estimator.get_variable_names()}

  values, graph_values = run(None), run("graph")
  assert {"beta1_power", "beta1_power_1", "beta2_power",
          "beta2_power_1"} <= set(values)
  assert sorted(values) == sorted(graph_values)
  for name, value in values.items():
    np.testing.assert_array_equal(value, graph_values[name], err_msg=name)
