"""TF1 identity comparison and hashing of Tensors and Variables in model_fn.

Under TF 2.15.1 + tensorflow-estimator 2.15.0 (run by hand), model_fn ran in
a TF1 Graph: `{variable: multiplier}`, `set(variables)`, `v not in frozen`,
`list.index(v)` and ExponentialMovingAverage.variables_to_restore() worked,
and `labels == 1.0` was the Python bool False. The function engine traced
model_fn in a function graph, where each of these raised (TypeError
"Variable is unhashable", OperatorNotAllowedInGraphError) or, for `==`,
silently computed an elementwise result the Estimator never computed
(finding G29).
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

_X = (np.arange(32, dtype=np.float32).reshape(8, 4) / 32) - 0.4
_Y = np.array([[1.], [0.], [1.], [1.], [0.], [1.], [0.], [0.]], np.float32)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


def _gradients(optimizer, loss, idiom):
  """(gradient, variable) pairs chosen with one TF1 variable idiom."""
  weights, bias = tf.compat.v1.trainable_variables()
  if idiom == "dict_key":  # per-variable gradient multipliers
    multiplier = {weights: 2.0, bias: 0.5}
    return [(g * multiplier[v], v)
            for g, v in optimizer.compute_gradients(loss)]
  if idiom == "not_in":  # freeze some variables
    frozen = [bias]
    return optimizer.compute_gradients(loss, var_list=[
        v for v in tf.compat.v1.trainable_variables() if v not in frozen])
  if idiom == "set_member":  # each variable once
    seen, pairs = set(), []
    for g, v in optimizer.compute_gradients(loss) * 2:
      if v not in seen:
        seen.add(v)
        pairs.append((g, v))
    return pairs
  assert idiom == "list_index"
  variables = tf.compat.v1.trainable_variables()
  del variables[variables.index(bias)]
  return optimizer.compute_gradients(loss, var_list=variables)


def _model_fn(features, labels, mode, params):
  weights = tf.compat.v1.get_variable(
      "w", [4, 1], initializer=tf.compat.v1.constant_initializer(0.1))
  bias = tf.compat.v1.get_variable(
      "b", [1], initializer=tf.compat.v1.constant_initializer(0.2))
  logits = tf.matmul(features["x"], weights) + bias
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  global_step = tf.compat.v1.train.get_global_step()
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
  train_op = optimizer.apply_gradients(
      _gradients(optimizer, loss, params["idiom"]), global_step=global_step)
  if params.get("average"):
    average = tf.compat.v1.train.ExponentialMovingAverage(0.9)
    with tf.control_dependencies([train_op]):
      train_op = average.apply([weights, bias])
    # A set of the global variables, by their TF1 names.
    count = len(average.variables_to_restore())
  else:
    count = len(set(tf.compat.v1.global_variables()))
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op,
                           eval_metric_ops={"variables": tf.compat.v1.metrics.mean(
                               float(count))})


def _trained(model_dir, engine, idiom, average=False):
  estimator = tfe.Estimator(_model_fn, str(model_dir),
                            config=tfe.RunConfig(engine=engine),
                            params={"idiom": idiom, "average": average})
  estimator.train(_input_fn, steps=3)
  metrics = estimator.evaluate(_input_fn, steps=1)
  return metrics, {name: estimator.get_variable_value(name)
                   for name in estimator.get_variable_names()}


@pytest.mark.parametrize("idiom",
                         ["dict_key", "not_in", "set_member", "list_index"])
def test_variables_compare_and_hash_as_in_a_tf1_graph(idiom, tmp_path):
  metrics, values = _trained(tmp_path / "function", "function", idiom)
  graph_metrics, graph_values = _trained(tmp_path / "graph", "graph", idiom)
  assert metrics["variables"] == 3.0  # w, b and global_step
  _assert_same(metrics, values, graph_metrics, graph_values)
  frozen = idiom in ("not_in", "list_index")
  assert (values["b"] == 0.2).all() == frozen
  assert not np.allclose(values["w"], 0.1)


def _assert_same(metrics, values, graph_metrics, graph_values):
  assert metrics == graph_metrics
  assert sorted(values) == sorted(graph_values)
  for name, value in values.items():
    np.testing.assert_array_equal(value, graph_values[name], err_msg=name)


def test_moving_average_variables_to_restore_runs_as_on_the_graph_engine(
    tmp_path):
  # variables_to_restore() also reads `v.op.name`, a TF1 graph attribute: the
  # default engine runs the call on the graph engine, as docs/engines.md says.
  metrics, values = _trained(tmp_path / "default", None, "dict_key", True)
  graph_metrics, graph_values = _trained(tmp_path / "graph", "graph",
                                         "dict_key", True)
  assert metrics["variables"] == 3.0
  assert "w/ExponentialMovingAverage" in values
  _assert_same(metrics, values, graph_metrics, graph_values)


def _equal_labels_model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features["x"], 1)
  # TF1 graph `==` is identity: the Python bool False, a shape () target.
  target = tf.cast(labels == 1.0, tf.float32)
  loss = tf.compat.v1.losses.mean_squared_error(target, logits)
  return tfe.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())


@pytest.mark.parametrize("engine", ["function", "graph"])
def test_tensor_equality_is_identity_as_in_a_tf1_graph(engine, tmp_path):
  estimator = tfe.Estimator(_equal_labels_model_fn, str(tmp_path),
                            config=tfe.RunConfig(engine=engine))
  # TF 2.15's error: the target was `labels is 1.0`, not an elementwise test.
  with pytest.raises(ValueError, match=r"Shapes \(None, 1\) and \(\) are "
                     "incompatible"):
    estimator.train(_input_fn, steps=1)
  assert not list(tmp_path.glob("model.ckpt*"))


def test_equality_outside_model_fn_is_left_elementwise(tmp_path):
  estimator = tfe.Estimator(_model_fn, str(tmp_path),
                            config=tfe.RunConfig(engine="function"),
                            params={"idiom": "dict_key"})
  estimator.train(_input_fn, steps=1)
  # The trace restored TF2's semantics for the rest of the program.
  assert tf.Tensor._USE_EQUALITY  # pylint: disable=protected-access
  equal = tf.constant([1.0, 2.0]) == tf.constant([1.0, 3.0])
  np.testing.assert_array_equal(equal, [True, False])
