"""An input_fn may return Python lists and numbers, as under the Estimator.

The Estimator handed model_fn what input_fn returned, unchanged: Python
lists, numbers, strings and numpy arrays reach model_fn as they are (the
expected values below were recorded by running the same programs on TF 2.15.1
+ tensorflow-estimator 2.15.0, ~/.cache/estimator-compat/tf215-venv).
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe



def _input_fn():
  return {"x": [[1.0], [2.0], [3.0], [4.0]]}, [[2.0], [4.0], [6.0], [8.0]]


def _model_fn(features, labels, mode):
  w = tf.compat.v1.get_variable(
      "w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
  pred = tf.matmul(features["x"], w)
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions={"p": pred})
  loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
  opt = tf.compat.v1.train.GradientDescentOptimizer(0.01)
  return tfe.EstimatorSpec(
      mode, loss=loss, predictions={"p": pred},
      train_op=opt.minimize(
          loss, global_step=tf.compat.v1.train.get_global_step()))


def test_lists_train_and_evaluate_as_the_estimator(tmp_path, engine):
  del engine
  est = tfe.Estimator(_model_fn, model_dir=str(tmp_path))
  est.train(_input_fn, steps=3)
  metrics = est.evaluate(_input_fn, steps=1)
  # The real Estimator (TF 2.15) on the same program.
  assert metrics["loss"] == pytest.approx(11.3144865, rel=1e-6)
  assert metrics["global_step"] == 3


def test_ints_and_floats_in_a_pair(tmp_path, engine_name):
  del engine_name
  seen = []

  def model_fn(features, labels, mode):
    seen.append((type(features["x"]), type(labels)))
    return _model_fn({"x": tf.reshape(tf.cast(features["x"], tf.float32),
                                      [1, 1])},
                     tf.reshape(labels, [1, 1]), mode)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(lambda: ({"x": 3}, 6.0), steps=1)
  assert est.get_variable_value("global_step") == 1
  # TF 2.15: model_fn got the int and the float themselves.
  assert seen == [(int, float)]


def test_ragged_lists_fail_where_model_fn_uses_them(tmp_path, engine):
  del engine
  est = tfe.Estimator(_model_fn, model_dir=str(tmp_path))
  # TF 2.15: the ragged list reached model_fn, whose tf.matmul raised this.
  with pytest.raises(ValueError, match="inhomogeneous shape"):
    est.train(lambda: ({"x": [[1.0], [2.0, 3.0]]}, [1.0, 2.0]), steps=1)


def _flatten_input_fn():
  return {"x": [[1.0], [2.0]]}, [[1.0], [3.0]]


def _flatten_model_fn(features, labels, mode):
  """Sums the means of the leaves tf.nest.flatten finds in features."""
  w = tf.compat.v1.get_variable(
      "w", [], initializer=tf.compat.v1.constant_initializer(0.2))
  leaves = tf.nest.flatten(features)
  pred = w * tf.add_n([tf.reduce_mean(tf.cast(leaf, tf.float32))
                       for leaf in leaves])
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions={
        "p": tf.reshape(pred, [1]), "leaves": tf.constant([len(leaves)])})
  loss = tf.reduce_mean(tf.square(tf.cast(labels, tf.float32) - pred))
  opt = tf.compat.v1.train.GradientDescentOptimizer(0.05)
  return tfe.EstimatorSpec(mode, loss=loss, train_op=opt.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step()))


def test_nest_flatten_sees_the_python_lists(tmp_path, engine_name):
  del engine_name
  est = tfe.Estimator(_flatten_model_fn, model_dir=str(tmp_path))
  est.train(_flatten_input_fn, steps=3)
  loss = est.evaluate(_flatten_input_fn, steps=1)["loss"]
  prediction = next(est.predict(lambda: _flatten_input_fn()[0]))
  # The real Estimator (TF 2.15) on the same program: the list's two items
  # are two leaves. (Made tensors, one leaf: loss 1.6261928, w 0.8057844.)
  assert loss == pytest.approx(1.0000019, rel=1e-6)
  assert est.get_variable_value("w") == pytest.approx(0.6662, rel=1e-6)
  assert prediction["leaves"] == 2
  assert prediction["p"] == pytest.approx(1.9986, rel=1e-6)


def _kinds(value):
  """The Python types of a nest: what model_fn got, told apart in detail."""
  if isinstance(value, dict):
    return {k: _kinds(v) for k, v in value.items()}
  if isinstance(value, (tuple, list)):
    return (type(value).__name__, [_kinds(v) for v in value])
  return "tensor" if tf.is_tensor(value) else type(value).__name__


def test_python_values_reach_model_fn_as_they_are(tmp_path, engine_name):
  del engine_name
  seen = []

  def model_fn(features, labels, mode):
    seen.append((mode, _kinds(features), _kinds(labels)))
    w = tf.compat.v1.get_variable("w", [], initializer=tf.ones_initializer())
    total = w * tf.add_n([
        tf.reduce_sum(tf.cast(features["n"], tf.float32)),
        tf.reduce_sum(features["a"]), tf.reduce_sum(features["t"])])
    if mode == tfe.ModeKeys.PREDICT:
      return tfe.EstimatorSpec(mode, predictions={"p": tf.reshape(total,
                                                                  [1])})
    loss = total + tf.reduce_sum(tf.cast(labels[0], tf.float32))
    train_op = tf.compat.v1.assign_add(
        tf.compat.v1.train.get_global_step(), 1)
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  def input_fn():
    features = {"n": 2, "a": np.ones((2, 1), np.float32),
                "t": tf.constant([[1.0], [1.0]]), "s": "name"}
    return features, [[1.0], [3.0]]

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(input_fn, steps=1)
  loss = est.evaluate(input_fn, steps=1)["loss"]
  prediction = next(est.predict(lambda: input_fn()[0]))
  # As recorded on TF 2.15: the int, the numpy array, the string and the
  # list (of lists of floats) unchanged; only the tensor is a tensor.
  features = {"n": "int", "a": "ndarray", "t": "tensor", "s": "str"}
  labels = ("list", [("list", ["float"]), ("list", ["float"])])
  assert seen == [("train", features, labels), ("eval", features, labels),
                  ("infer", features, "NoneType")]
  assert loss == pytest.approx(7.0)
  assert prediction["p"] == pytest.approx(6.0)


def _iterator_input_fn():
  """Tensors of a one-shot iterator next to Python values."""
  data = tf.data.Dataset.from_tensor_slices(
      np.arange(6, dtype=np.float32).reshape(6, 1)).batch(2)
  x = tf.compat.v1.data.make_one_shot_iterator(data).get_next()
  return {"x": x, "scale": [2.0]}, [[1.0], [3.0]]


def _scaled_model_fn(features, labels, mode):
  w = tf.compat.v1.get_variable(
      "w", [], initializer=tf.compat.v1.constant_initializer(0.2))
  # tf.constant takes Python values only, as model_fn got them.
  pred = w * features["x"] * tf.constant(features["scale"])
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions={"p": pred})
  loss = tf.reduce_mean(tf.square(tf.constant(labels) - pred))
  opt = tf.compat.v1.train.GradientDescentOptimizer(0.01)
  return tfe.EstimatorSpec(mode, loss=loss, train_op=opt.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step()))


def test_python_values_next_to_iterator_tensors(tmp_path, engine_name):
  del engine_name
  est = tfe.Estimator(_scaled_model_fn, model_dir=str(tmp_path))
  est.train(_iterator_input_fn)
  metrics = est.evaluate(_iterator_input_fn)
  predictions = [float(p["p"][0])
                 for p in est.predict(lambda: _iterator_input_fn()[0])]
  # The real Estimator (TF 2.15) on the same program: 3 batches each time.
  assert metrics["global_step"] == 3
  assert metrics["loss"] == pytest.approx(2.4004514, rel=1e-6)
  assert est.get_variable_value("w") == pytest.approx(0.1617856, rel=1e-6)
  assert predictions == pytest.approx(
      [0.0, 0.3235712, 0.6471424, 0.9707136, 1.2942848, 1.617856], rel=1e-6)


def test_empty_features_reach_model_fn(tmp_path, engine_name):
  del engine_name
  seen = []

  def model_fn(features, labels, mode):
    seen.append((mode, features, labels))
    w = tf.compat.v1.get_variable(
        "w", [], initializer=tf.compat.v1.constant_initializer(3.0))
    if mode == tfe.ModeKeys.PREDICT:
      return tfe.EstimatorSpec(mode, predictions={"w": tf.reshape(w, [1])})
    loss = tf.square(w)
    opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    return tfe.EstimatorSpec(mode, loss=loss, train_op=opt.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()))

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(lambda: (dict(), None), steps=3)
  metrics = est.evaluate(lambda: (dict(), None), steps=2)
  prediction = next(est.predict(lambda: {}))
  # The real Estimator (TF 2.15) on the same program.
  assert metrics["loss"] == pytest.approx(2.359296, rel=1e-6)
  assert metrics["global_step"] == 3
  assert prediction["w"] == pytest.approx(1.536, rel=1e-6)
  assert seen == [("train", {}, None), ("eval", {}, None),
                  ("infer", {}, None)]
