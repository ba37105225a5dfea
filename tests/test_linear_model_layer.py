"""The canned linear model's Keras model (canned/linear_logits.py).

Each result below matched the real tensorflow_estimator LinearModel (TF
2.15) for the same calls: the errors, the variable names, the output shape
and the layer config's round trip.
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.canned.linear_logits import LinearModel

_COLUMNS = [tf.feature_column.numeric_column("x", shape=(2,)),
            tf.feature_column.categorical_column_with_identity("c", 3)]


def _features():
  return {"x": tf.constant([[1.0, 2.0]]),
          "c": tf.sparse.from_dense(tf.constant([[1, 2]], tf.int64))}


def test_items_must_be_feature_columns():
  with pytest.raises(ValueError, match="Items of feature_columns must be a "
                     "FeatureColumn. Given \\(type <class 'str'>\\): x."):
    LinearModel(["x"])


def test_a_sequence_column_is_neither_dense_nor_categorical():
  with pytest.raises(ValueError, match="Items of feature_columns must be "
                     "either a DenseColumn or CategoricalColumn. Given: "
                     "SequenceNumericColumn"):
    LinearModel([tf.feature_column.sequence_numeric_column("s")])


def test_features_must_be_a_dict():
  model = LinearModel(_COLUMNS)
  with pytest.raises(ValueError, match="We expected a dictionary here."):
    model(tf.constant([[1.0, 2.0]]))


def test_variables_and_the_weighted_sum():
  model = LinearModel(_COLUMNS, units=2, sparse_combiner="mean",
                      name="lm")
  assert model(_features()).shape == (1, 2)
  assert sorted(v.name for v in model.variables) == [
      "lm/bias_weights:0", "lm/c/weights:0", "lm/x/weights:0"]
  for variable in model.variables:
    variable.assign(tf.ones_like(variable))
  # x: 1 + 2; c (mean of buckets 1 and 2): 1; bias: 1.
  np.testing.assert_allclose(model(_features()).numpy(), [[5.0, 5.0]])


def test_the_layer_config_round_trips():
  model = LinearModel(_COLUMNS, units=2, sparse_combiner="mean")
  config = model.layer.get_config()
  assert (config["units"], config["sparse_combiner"]) == (2, "mean")
  copy = type(model.layer).from_config(config)
  assert copy(_features()).shape == (1, 2)
  assert [c.name for c in copy._feature_columns] == ["c", "x"]  # pylint: disable=protected-access
