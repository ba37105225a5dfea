"""The linear model over feature columns (canned/linear_logits.py).

Variable names are TensorFlow 2.15's: model_dirs written by its Linear* and
DNNLinearCombined* estimators must restore.
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.canned import linear_logits

FEATURES = {"x": [[1.0], [2.0]], "c": [["a"], ["b"]]}


def _names(graph):
  return sorted(v.op.name for v in graph.get_collection(
      tf.compat.v1.GraphKeys.GLOBAL_VARIABLES))


def _columns(fc):
  return [fc.numeric_column("x"),
          fc.categorical_column_with_vocabulary_list("c", ["a", "b"])]


def test_v2_names_and_variables():
  with tf.Graph().as_default() as graph:
    features = {k: tf.constant(v) for k, v in FEATURES.items()}
    logits, variables = linear_logits.linear_logits_v2(
        features, _columns(tf.feature_column), units=3)
    assert logits.shape.as_list() == [2, 3]
    assert _names(graph) == ["linear/linear_model/bias_weights",
                             "linear/linear_model/c/weights",
                             "linear/linear_model/x/weights"]
    assert len(variables) == 3  # The bias is trained too.


def test_v2_inside_a_scope_gives_the_same_names():
  with tf.Graph().as_default() as graph:
    features = {k: tf.constant(v) for k, v in FEATURES.items()}
    with tf.compat.v1.variable_scope("linear"):
      linear_logits.linear_logits_v2(features, _columns(tf.feature_column),
                                     units=1, name="linear_model")
    assert _names(graph) == ["linear/linear_model/bias_weights",
                             "linear/linear_model/c/weights",
                             "linear/linear_model/x/weights"]


def test_v2_refuses_v1_columns():
  fc = tf.compat.v1.feature_column
  with tf.Graph().as_default():
    shared = fc.shared_embedding_columns(  # A TF1-only column class.
        [fc.categorical_column_with_vocabulary_list("c", ["a", "b"])], 2)
    features = {k: tf.constant(v) for k, v in FEATURES.items()}
    with pytest.raises(ValueError, match="feature column from TensorFlow v1"):
      linear_logits.linear_logits_v2(features, shared, units=1)


def test_v1_partitioned_names_and_logits():
  with tf.Graph().as_default() as graph:
    features = {k: tf.constant(v) for k, v in FEATURES.items()}
    with tf.compat.v1.variable_scope(
        "linear", partitioner=tf.compat.v1.fixed_size_partitioner(2)):
      logits, weights = linear_logits.linear_logits_v1(
          features, _columns(tf.compat.v1.feature_column), units=1)
    assert _names(graph) == ["linear/linear_model/bias_weights/part_0",
                             "linear/linear_model/c/weights/part_0",
                             "linear/linear_model/c/weights/part_1",
                             "linear/linear_model/x/weights/part_0"]
    assert len(weights) == 3  # Column weights, partitions expanded.
    with tf.compat.v1.Session() as session:
      session.run([tf.compat.v1.global_variables_initializer(),
                   tf.compat.v1.tables_initializer()])
      np.testing.assert_array_equal(session.run(logits), [[0.0], [0.0]])


def test_fraction_of_zero():
  with tf.Graph().as_default():
    fraction = linear_logits.fraction_of_zero(
        [tf.constant([0.0, 1.0]), tf.constant([[0.0, 0.0], [0.0, 2.0]]),
         tf.zeros([0])])
    with tf.compat.v1.Session() as session:
      assert abs(session.run(fraction) - 4.0 / 6.0) < 1e-6
