"""tf-keras Sequential and functional models built inside model_fn.

TF 2.15.1 + tensorflow-estimator 2.15.0 (run by hand) built them with
tf-keras's graph-mode classes: a Sequential given no input shape named its
variables `sequential/dense/kernel`, and a Dropout inside a Sequential or
functional model drew other masks than the same model traced in a TF2
function. `model.get_updates_for(inputs)`, which grouped a batch norm's
moving-average updates into the train op, is a method of those graph-mode
classes only. The function engine sends all three to the graph engine, which
gives TF 2.15's names and values; the same models without those run on it.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.errors import NeedsGraphEngine

_X = (np.arange(30, dtype=np.float32).reshape(10, 3) / 24) ** 2
_Y = np.array([[1.], [0.], [1.], [0.], [1], [1], [0], [0], [1], [0]],
              np.float32)


def _layers(dropout):
  first = tf.keras.layers.Dense(
      4, activation="relu",
      kernel_initializer=tf.keras.initializers.GlorotUniform(seed=1))
  last = tf.keras.layers.Dense(
      1, kernel_initializer=tf.keras.initializers.GlorotUniform(seed=2))
  return [first] + ([tf.keras.layers.Dropout(0.3, seed=3)]
                    if dropout else []) + [last]


def _model(kind):
  if kind == "sequential_on_first_call":
    return tf.keras.Sequential(_layers(dropout=False))
  if kind == "sequential_with_dropout":
    return tf.keras.Sequential([tf.keras.layers.InputLayer(input_shape=(3,))]
                               + _layers(dropout=True))
  if kind == "functional_with_dropout":
    inputs = tf.keras.Input(shape=(3,))
    outputs = inputs
    for layer in _layers(dropout=True):
      outputs = layer(outputs)
    return tf.keras.Model(inputs, outputs)
  if kind in ("batch_norm_updates_for_inputs", "batch_norm_model_updates"):
    first, last = _layers(dropout=False)
    return tf.keras.Sequential([tf.keras.layers.InputLayer(input_shape=(3,)),
                                first, tf.keras.layers.BatchNormalization(
                                    momentum=0.5), last])
  assert kind == "sequential_with_shape"
  return tf.keras.Sequential([tf.keras.layers.InputLayer(input_shape=(3,))]
                             + _layers(dropout=False))


def _model_fn(features, labels, mode, params):
  model = _model(params["kind"])
  logits = model(features["x"], training=mode == tfe.ModeKeys.TRAIN)
  loss = tf.reduce_mean(tf.keras.losses.binary_crossentropy(
      labels, logits, from_logits=True))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, tf.compat.v1.train.get_global_step())
  if params["kind"] == "batch_norm_updates_for_inputs":
    # TF 2.15's (graph-mode) Model method; tf-keras's TF2 Model has none.
    train_op = tf.group(train_op, *model.get_updates_for(features["x"]))
  if params["kind"] == "batch_norm_model_updates":
    train_op = tf.group(train_op, *model.updates)
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


def _trained(kind, model_dir, engine=None):
  estimator = tfe.Estimator(
      _model_fn, model_dir=str(model_dir), params={"kind": kind},
      config=tfe.RunConfig(tf_random_seed=1, engine=engine))
  estimator.train(_input_fn, steps=4)
  return {name: estimator.get_variable_value(name)
          for name in estimator.get_variable_names()}


def _assert_equal(ours, graph):
  assert sorted(ours) == sorted(graph)
  for name, value in graph.items():
    np.testing.assert_array_equal(ours[name], value, err_msg=name)


@pytest.mark.parametrize("kind", ["sequential_on_first_call",
                                  "sequential_with_dropout",
                                  "functional_with_dropout",
                                  "batch_norm_updates_for_inputs"])
def test_the_default_engine_gives_the_graph_engines_model(tmp_path, kind):
  ours = _trained(kind, tmp_path / "default")
  _assert_equal(ours, _trained(kind, tmp_path / "graph", engine="graph"))
  if kind == "sequential_on_first_call":
    assert "sequential/dense/kernel" in ours  # TF 2.15's name
  if kind == "batch_norm_updates_for_inputs":  # The updates ran.
    assert np.abs(ours["batch_normalization/moving_mean"]).sum() > 0


@pytest.mark.parametrize("kind, words", [
    ("sequential_on_first_call", "on its first call"),
    ("sequential_with_dropout", "draws random numbers"),
    ("functional_with_dropout", "draws random numbers"),
    ("batch_norm_updates_for_inputs", "get_updates_for")])
def test_the_function_engine_refuses_before_any_checkpoint(tmp_path, kind,
                                                           words):
  with pytest.raises(NeedsGraphEngine, match=words):
    _trained(kind, tmp_path, engine="function")
  assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_a_sequential_with_an_input_shape_stays_on_the_function_engine(
    tmp_path):
  ours = _trained("sequential_with_shape", tmp_path / "function",
                  engine="function")
  assert "dense/kernel" in ours  # TF 2.15's name: built at construction
  _assert_equal(ours, _trained("sequential_with_shape", tmp_path / "graph",
                               engine="graph"))


def test_model_updates_run_the_batchs_updates(tmp_path):
  # known_differences.md, keras-model-updates-runs: TF 2.15 failed here.
  ours = _trained("batch_norm_model_updates", tmp_path / "updates")
  _assert_equal(ours, _trained("batch_norm_updates_for_inputs",
                               tmp_path / "updates_for"))


def test_under_a_strategy_the_refusal_is_loud(tmp_path):
  # The graph engine runs strategies only in TF1 mode, so the call cannot
  # move there: it fails before any checkpoint rather than train other names.
  estimator = tfe.Estimator(
      _model_fn, model_dir=str(tmp_path),
      params={"kind": "sequential_on_first_call"},
      config=tfe.RunConfig(tf_random_seed=1, train_distribute=(
          tf.distribute.MirroredStrategy(["/cpu:0"]))))
  with pytest.raises(ValueError, match="on its first call"):
    estimator.train(_input_fn, steps=1)
  assert tf.train.latest_checkpoint(str(tmp_path)) is None
