"""LinearSDCA as the optimizer of the Linear estimators (TF 2.15 behaviour).

The goldens sdca_classifier_v2 / sdca_regressor_v1 compare weights, metrics
and predictions with the real Estimator; these tests cover the checks, the
engines, the checkpoint names and the sharded state table.
"""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.feature_column import feature_column as fc_v1

import estimator_compat as tfe
from estimator_compat import v1 as tfe_v1
from estimator_compat.canned.sdca import sharded_table
from estimator_compat.errors import NeedsGraphEngine


def _columns():
  return [tf.feature_column.numeric_column("x"),
          tf.feature_column.categorical_column_with_vocabulary_list(
              "c", ["u", "v", "w"])]


def _input_fn(labels):
  def input_fn():
    features = {"example_id": tf.constant(["a", "b", "c", "d"]),
                "x": tf.constant([[1.0], [2.0], [0.5], [-1.0]]),
                "c": tf.constant([["u"], ["v"], ["u"], ["zz"]])}
    return features, tf.constant(labels)
  return input_fn


_BINARY = [[1], [0], [1], [0]]
_TARGET = [[1.5], [-0.5], [1.0], [-2.0]]


def _sdca(**kwargs):
  return tfe.experimental.LinearSDCA(example_id_column="example_id",
                                     symmetric_l2_regularization=2.0,
                                     **kwargs)


@pytest.fixture(autouse=True)
def _default_engine(monkeypatch):
  """The default engine: it trains SDCA on the graph engine."""
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)


@pytest.mark.parametrize("eval_engine", ["graph", "function"])
def test_classifier_trains_with_sdca_and_the_estimators_names(
    tmp_path, eval_engine):
  classifier = tfe.LinearClassifier(_columns(), model_dir=str(tmp_path),
                                    optimizer=_sdca())
  evaluator = tfe.LinearClassifier(
      _columns(), model_dir=str(tmp_path), optimizer=_sdca(),
      config=tfe.RunConfig(engine=eval_engine))
  classifier.train(_input_fn(_BINARY), steps=1)
  before = evaluator.evaluate(_input_fn(_BINARY), steps=1)["loss"]
  classifier.train(_input_fn(_BINARY), steps=20)
  after = evaluator.evaluate(_input_fn(_BINARY), steps=1)
  assert after["loss"] < before
  assert after["accuracy"] == 1.0
  names = dict(tf.train.list_variables(str(tmp_path)))
  assert names["ShardedMutableHashTable-1-of-1-values"][1] == 4
  for weight in ("bias_weights", "x/weights", "c/weights"):
    assert f"linear/linear_model/{weight}" in names
    assert f"linear/linear_model/{weight}_unshrunk" in names
  # The slots hold the unshrunk weights; without L1 the weights equal them.
  np.testing.assert_allclose(
      classifier.get_variable_value("linear/linear_model/c/weights"),
      classifier.get_variable_value("linear/linear_model/c/weights_unshrunk"))


def test_l1_shrinks_the_weights_towards_zero(tmp_path):
  regressor = tfe.LinearRegressor(
      _columns(), model_dir=str(tmp_path),
      optimizer=_sdca(symmetric_l1_regularization=0.5))
  regressor.train(_input_fn(_TARGET), steps=10)
  weights = regressor.get_variable_value("linear/linear_model/x/weights")
  unshrunk = regressor.get_variable_value(
      "linear/linear_model/x/weights_unshrunk")
  # l1 / l2 = 0.25.
  np.testing.assert_allclose(
      weights, np.sign(unshrunk) * np.maximum(np.abs(unshrunk) - 0.25, 0),
      rtol=1e-6)


def test_v1_regressor_partitions_weights_slots_and_table(tmp_path):
  regressor = tfe_v1.LinearRegressor(
      _columns(), model_dir=str(tmp_path),
      optimizer=tfe_v1.experimental.LinearSDCA(
          example_id_column="example_id", num_table_shards=2),
      partitioner=tf.compat.v1.fixed_size_partitioner(2))
  regressor.train(_input_fn(_TARGET), steps=15)
  names = dict(tf.train.list_variables(str(tmp_path)))
  # As TF 2.15 named them: a partitioned weight is saved whole (in slices),
  # its slots per partition, under the variable scope twice.
  assert names["linear/linear_model/c/weights"] == [3, 1]
  assert "linear/linear/linear_model/c/weights/part_1_unshrunk" in names
  assert "ShardedMutableHashTable-2-of-2-keys" in names
  loss = regressor.evaluate(_input_fn(_TARGET), steps=1)["average_loss"]
  assert loss < 0.5


def test_explicit_function_engine_names_the_graph_engine(tmp_path):
  classifier = tfe.LinearClassifier(
      _columns(), model_dir=str(tmp_path), optimizer=_sdca(),
      config=tfe.RunConfig(engine="function"))
  with pytest.raises(NeedsGraphEngine, match="LinearSDCA.*graph engine"):
    classifier.train(_input_fn(_BINARY), steps=1)


@pytest.mark.parametrize("build,message", [
    (lambda: tfe.LinearClassifier(_columns(), n_classes=3, optimizer=_sdca()),
     "multi-class"),
    (lambda: tfe.LinearClassifier(_columns(), sparse_combiner="mean",
                                  optimizer=_sdca()),
     'sparse_combiner must be "sum"'),
    (lambda: tfe.LinearRegressor(_columns(), label_dimension=2,
                                 optimizer=_sdca()),
     "one-dimensional label"),
    (lambda: tfe_v1.LinearClassifier(
        [fc_v1._numeric_column("x")], optimizer=_sdca()),  # pylint: disable=protected-access
     "V2 feature columns required"),
])
def test_bad_arguments_are_refused_at_construction(build, message):
  with pytest.raises(ValueError, match=message):
    build()


@pytest.mark.parametrize("num_shards", [1, 3])
def test_sharded_table_inserts_looks_up_and_exports(num_shards):
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    table = sharded_table.ShardedMutableDenseHashTable(
        tf.int64, tf.float32, default_value=[-1.0, 0.0], empty_key=[0, 0],
        deleted_key=[1, 1], num_shards=num_shards)
    keys = tf.constant([[11, 2], [12, 3], [13, 4]], tf.int64)
    session.run(table.insert(keys, tf.constant([[1., 2.], [3., 4.],
                                                [5., 6.]])))
    found = table.lookup(tf.constant([[13, 4], [14, 5], [11, 2]], tf.int64))
    np.testing.assert_allclose(session.run(found),
                               [[5., 6.], [-1., 0.], [1., 2.]])
    assert session.run(table.size()) == 3
    keys_by_shard, _ = table.export_sharded()
    assert len(keys_by_shard) == num_shards
    first_keys = [k[0] for keys in session.run(keys_by_shard)
                  for k in keys if k[0] > 1]
    assert sorted(first_keys) == [11, 12, 13]
