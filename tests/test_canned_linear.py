"""Linear* and Baseline* canned estimators beyond the goldens.

The goldens (tests/goldens/linear_*, baseline_*) pin names, numbers, metrics,
predictions and exports against TF 2.15; these pin the rules around them:
default learning rates, partitioned resume, bad input, warm start, a
strategy, and the public names.
"""

import math
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.canned import linear
from estimator_compat import v1 as tfe_v1

X = np.array([[0.5], [1.0], [-1.0], [2.0], [0.0], [-0.5]], np.float32)
COLOR = np.array(["a", "b", "c", "d", "a", "b"])
Y = np.array([1, 1, 0, 1, 0, 0], np.int64)


def _input_fn(labels=Y, repeat=None):
  def input_fn():
    data = tf.data.Dataset.from_tensor_slices(
        ({"x": X, "color": COLOR, "w": np.ones(6, np.float32)}, labels))
    return data.repeat(repeat).batch(3)
  return input_fn


def _columns(fc=tf.feature_column):
  return [fc.numeric_column("x"),
          fc.categorical_column_with_vocabulary_list(
              "color", ["a", "b", "c", "d"])]


def _checkpoint(model_dir):
  return dict(tf.train.list_variables(model_dir))


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("optimizer,expected", [
    ("Ftrl", 0.2), (None, 1.0 / math.sqrt(30))])
def test_v2_default_ftrl_learning_rates(optimizer, expected, tmp_path):
  """A name gets 0.2; optimizer=None gets min(0.2, 1/sqrt(#columns))."""
  keys = [f"f{i}" for i in range(30)]

  def input_fn():
    features = {k: X[:, 0] for k in keys}
    return tf.data.Dataset.from_tensor_slices((features, Y)).batch(3)

  estimator = tfe.LinearClassifier(
      [tf.feature_column.numeric_column(k) for k in keys],
      model_dir=str(tmp_path), optimizer=optimizer)
  estimator.train(input_fn, steps=2)
  rate = estimator.get_variable_value("training/Ftrl/learning_rate")
  assert rate == pytest.approx(expected)


def test_v1_partitioned_weights_resume(tmp_path, engine, monkeypatch):
  """part_<i> weights with per-partition Ftrl slots save and restore.

  Training them needs the graph engine: on the function engine the default
  engine routes it there (an explicit engine='function' raises).
  """
  if engine == "function":
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE")
  estimator = tfe_v1.LinearClassifier(
      _columns(tf.compat.v1.feature_column), model_dir=str(tmp_path),
      partitioner=tf.compat.v1.fixed_size_partitioner(2))
  estimator.train(_input_fn(), steps=2)
  estimator.train(_input_fn(), steps=2)  # Restores the partitions.
  names = _checkpoint(str(tmp_path))
  assert names["global_step"] == []
  assert names["linear/linear_model/color/weights"] == [4, 1]
  assert "linear/linear_model/color/weights/part_1/Ftrl" in names
  assert estimator.get_variable_value("global_step") == 4
  assert len(list(estimator.predict(_input_fn(repeat=1)))) == 6


def test_v1_linear_training_on_an_explicit_function_engine_says_why(
    tmp_path, monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  estimator = tfe_v1.LinearClassifier(
      _columns(tf.compat.v1.feature_column), model_dir=str(tmp_path))
  with pytest.raises(ValueError, match="partitions its weights.*graph engine"):
    estimator.train(_input_fn(), steps=1)
  assert not tf.io.gfile.glob(os.path.join(str(tmp_path), "model.ckpt*"))


@pytest.mark.usefixtures("engine")
def test_v1_columns_in_a_v2_estimator_fail_before_any_checkpoint(tmp_path):
  fc = tf.compat.v1.feature_column
  color = fc.categorical_column_with_vocabulary_list("color", ["a", "b"])

  def v1_only_columns():
    return fc.shared_embedding_columns([color], 2)

  estimator = tfe.LinearRegressor(_LazyColumns(v1_only_columns),
                                  model_dir=str(tmp_path))
  with pytest.raises(ValueError, match="feature column from TensorFlow v1"):
    estimator.train(_input_fn(labels=Y.astype(np.float32)), steps=1)
  assert not tf.io.gfile.glob(os.path.join(str(tmp_path), "model.ckpt*"))


class _LazyColumns:
  """Columns built when iterated (shared embeddings need a graph)."""

  def __init__(self, build):
    self._build = build

  def __iter__(self):
    return iter(self._build())


@pytest.mark.usefixtures("engine")
def test_warm_start_from_another_linear_model(tmp_path):
  first = tfe.LinearRegressor(_columns(), model_dir=str(tmp_path / "a"))
  first.train(_input_fn(labels=Y.astype(np.float32)), steps=3)
  second = tfe.LinearRegressor(_columns(), model_dir=str(tmp_path / "b"),
                               warm_start_from=str(tmp_path / "a"))
  second.train(_input_fn(labels=Y.astype(np.float32)), steps=1)
  reader = tf.train.load_checkpoint(str(tmp_path / "b" / "model.ckpt-0"))
  np.testing.assert_array_equal(
      reader.get_tensor("linear/linear_model/color/weights"),
      first.get_variable_value("linear/linear_model/color/weights"))


@pytest.mark.usefixtures("engine")
def test_v2_baseline_with_several_features_learns_the_prior(tmp_path):
  """TF 2.15 failed with more than one feature (see docs/decisions.md)."""
  estimator = tfe.BaselineClassifier(model_dir=str(tmp_path),
                                     optimizer="SGD")
  estimator.train(_input_fn(), steps=200)
  bias = estimator.get_variable_value("baseline/bias")
  # The prior of Y is 1/2: the logit tends to 0.
  assert abs(float(bias[0])) < 0.05
  predictions = list(estimator.predict(_input_fn(repeat=1)))
  assert len(predictions) == 6
  assert {"logits", "logistic", "probabilities", "class_ids", "classes",
          "all_class_ids", "all_classes"} <= set(predictions[0])


def test_mirrored_strategy_trains_like_one_device(tmp_path):
  labels = Y.astype(np.float32)
  single = tfe.LinearRegressor(_columns(), model_dir=str(tmp_path / "one"))
  single.train(_input_fn(labels=labels), steps=4)
  config = tfe.RunConfig(train_distribute=tf.distribute.MirroredStrategy(
      ["/cpu:0"]))
  mirrored = tfe.LinearRegressor(_columns(), model_dir=str(tmp_path / "m"),
                                 config=config)
  mirrored.train(_input_fn(labels=labels), steps=4)
  assert (sorted(mirrored.get_variable_names())
          == sorted(single.get_variable_names()))
  for name in ("linear/linear_model/x/weights",
               "linear/linear_model/color/weights",
               "linear/linear_model/bias_weights"):
    np.testing.assert_allclose(mirrored.get_variable_value(name),
                               single.get_variable_value(name), rtol=1e-5)


def test_public_names_are_the_two_families():
  assert tfe.LinearClassifier.__name__ == "LinearClassifierV2"
  assert tfe_v1.LinearClassifier.__name__ == "LinearClassifier"
  assert tfe.BaselineRegressor.__name__ == "BaselineRegressorV2"
  assert tfe_v1.BaselineEstimator.__name__ == "BaselineEstimator"
  assert linear.LinearClassifierV2 is tfe.LinearClassifier
  assert linear.LinearRegressor is tfe_v1.LinearRegressor


@pytest.mark.usefixtures("engine")
def test_python_tuples_from_input_fn_train_the_model(tmp_path):
  """The Estimator's own canned tests return `{'age': ((17,),)}, ((5.,),)`.

  The tuples reach the model unchanged; its feature columns and head make
  them tensors, as under the Estimator.
  """
  estimator = tfe.LinearRegressor([tf.feature_column.numeric_column("age")],
                                  model_dir=str(tmp_path), optimizer="SGD")
  estimator.train(lambda: ({"age": ((17.0,), (3.0,))}, ((5.0,), (1.0,))),
                  steps=1)
  # One SGD step (rate 0.2) on the mean squared error from zero weights.
  np.testing.assert_allclose(
      estimator.get_variable_value("linear/linear_model/age/weights"),
      [[0.2 * (17.0 * 5.0 + 3.0 * 1.0)]], rtol=1e-5)
