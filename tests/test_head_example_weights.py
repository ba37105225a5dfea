"""The heads' example weights (head/weights.py), as the Estimator's heads.

Checked against the real Estimator (TF 2.15) eagerly with RegressionHead:
weights of shape [2] and [2, 1] for logits [2, 1] give the same loss, a
[1, 2] or [3] weight raises the same ValueError wording, a SparseTensor and
a non-column weight_column the same errors, and a missing weight feature
"Feature w is not in features dictionary." (we add which features there
are and the fix).
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.head.weights import weights_for

_SHAPES = "weights shape must be [D0, D1, ... DN] or [D0, D1, ... DN, 1]"
_LOGITS = tf.constant([[1.0], [2.0]])


def test_no_weight_column_weighs_each_example_one():
  assert weights_for({"x": tf.constant([1.0])}, None, _LOGITS) == 1.


@pytest.mark.parametrize("weights", [[1.0, 2.0], [[1.0], [2.0]], [1, 2]])
def test_per_example_weights_become_a_column_of_floats(weights):
  got = weights_for({"w": tf.constant(weights)}, "w", _LOGITS)
  assert got.dtype == tf.float32
  np.testing.assert_array_equal(got.numpy(), [[1.0], [2.0]])


@pytest.mark.parametrize("weights, shape", [([[1.0, 2.0]], "(1, 2)"),
                                            ([1.0, 2.0, 3.0], "(3, 1)")])
def test_weights_of_another_shape_raise_the_estimators_error(weights, shape):
  with pytest.raises(ValueError) as raised:
    weights_for({"w": tf.constant(weights)}, "w", _LOGITS)
  assert str(raised.value).startswith(_SHAPES)
  assert f"logits_shape: (2, 1). weights_shape: {shape}." in str(raised.value)


def test_per_logit_weights_only_where_the_head_allows_them():
  logits = tf.zeros([2, 3])
  per_logit = tf.ones([2, 3])
  got = weights_for({"w": per_logit}, "w", logits,
                    allow_per_logit_weights=True)
  assert got.shape == (2, 3)
  with pytest.raises(ValueError, match="weights_shape: \\(2, 3\\)"):
    weights_for({"w": per_logit}, "w", logits)
  with pytest.raises(ValueError, match="weights_shape: \\(2, 2\\)"):
    weights_for({"w": tf.ones([2, 2])}, "w", logits,
                allow_per_logit_weights=True)


def test_weights_one_rank_under_the_logits_get_the_last_axis():
  logits = tf.zeros([2, 3, 1])
  got = weights_for({"w": tf.ones([2, 3])}, "w", logits)
  assert got.shape == (2, 3, 1)
  with pytest.raises(ValueError, match="weights_shape: \\(2, 4\\)"):
    weights_for({"w": tf.ones([2, 4])}, "w", logits)


def test_a_numeric_columns_normalizer_applies():
  column = tf.feature_column.numeric_column("w", normalizer_fn=lambda x: x * 3)
  got = weights_for({"w": tf.constant([1.0, 2.0])}, column, _LOGITS)
  np.testing.assert_array_equal(got.numpy(), [[3.0], [6.0]])


def test_bad_weight_columns_and_features_say_what_to_feed():
  with pytest.raises(TypeError) as raised:
    weights_for({"w": tf.constant([1.0, 1.0])}, 3, _LOGITS)
  assert str(raised.value).startswith(
      "Weight column must be either a string or NumericColumn. Given type: "
      "<class 'int'>.")
  with pytest.raises(ValueError) as raised:
    weights_for({"v": tf.constant([1.0, 1.0])}, "w", _LOGITS)
  assert str(raised.value).startswith(
      "Feature w is not in features dictionary.")
  assert "(['v'])" in str(raised.value) and "Fix:" in str(raised.value)
  sparse = tf.sparse.from_dense([[1.0], [0.0]])
  with pytest.raises(ValueError) as raised:
    weights_for({"w": sparse}, "w", _LOGITS)
  assert str(raised.value).startswith(
      "The corresponding Tensor of numerical column must be a Tensor. "
      "SparseTensor is not supported. key: w")
  with pytest.raises(ValueError, match="should be castable to float"):
    weights_for({"w": tf.constant([["a"], ["b"]])}, "w", _LOGITS)


def _run_in_graph(weights, logits, allow_per_logit_weights=False):
  with tf.Graph().as_default():
    w = tf.compat.v1.placeholder(tf.float32, [None] * len(np.shape(weights)))
    got = weights_for({"w": w}, "w", tf.constant(logits),
                      allow_per_logit_weights=allow_per_logit_weights)
    with tf.compat.v1.Session() as session:
      return session.run(got, {w: weights})


def test_in_a_graph_the_shapes_are_checked_when_run():
  np.testing.assert_array_equal(
      _run_in_graph([1.0, 2.0], [[1.0], [2.0]]), [[1.0], [2.0]])
  np.testing.assert_array_equal(
      _run_in_graph([[1.0], [2.0]], [[1.0], [2.0]]), [[1.0], [2.0]])
  with pytest.raises(tf.errors.InvalidArgumentError, match="weights shape"):
    _run_in_graph([1.0, 2.0, 3.0], [[1.0], [2.0]])
  with pytest.raises(tf.errors.InvalidArgumentError, match="weights shape"):
    _run_in_graph([[1.0, 2.0]], [[1.0], [2.0]])
  np.testing.assert_array_equal(
      _run_in_graph(np.ones([2, 3]), np.zeros([2, 3, 1])), np.ones([2, 3, 1]))
  with pytest.raises(tf.errors.InvalidArgumentError, match="weights shape"):
    _run_in_graph(np.ones([2, 4]), np.zeros([2, 3, 1]))
  ones = np.ones([2, 3], np.float32)
  np.testing.assert_array_equal(
      _run_in_graph(ones, ones, allow_per_logit_weights=True), ones)
  with pytest.raises(tf.errors.InvalidArgumentError):
    _run_in_graph(np.ones([2, 2]), ones, allow_per_logit_weights=True)
