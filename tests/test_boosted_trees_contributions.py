"""Directional feature contributions of boosted trees (explanations.py).

A hand-built two-tree ensemble: each example's path of logits (the bias,
then after each split) and its per-feature contributions, as
experimental_predict_with_explanations reports them.
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.canned.boosted_trees import explanations, tree_proto


def _split_tree(tree, feature_id, threshold, original, left, right):
  root = tree.nodes.add()
  root.bucketized_split.feature_id = feature_id
  root.bucketized_split.threshold = threshold
  root.bucketized_split.left_id = 1
  root.bucketized_split.right_id = 2
  root.metadata.original_leaf.scalar = original
  tree.nodes.add().leaf.scalar = left
  tree.nodes.add().leaf.scalar = right


def _ensemble(grown_second_tree=True):
  ensemble = tree_proto.TreeEnsemble()
  _split_tree(ensemble.trees.add(), 0, 1, 0.5, 1.0, -1.0)
  second = ensemble.trees.add()
  if grown_second_tree:
    _split_tree(second, 1, 0, 0.0, 0.25, -0.25)
  else:
    second.nodes.add().leaf.scalar = 0.0
  ensemble.tree_weights.extend([1.0, 0.5])
  return ensemble.SerializeToString()


_FEATURES = [np.array([[0], [3]]), np.array([[0], [1]])]


def test_each_example_follows_its_splits_through_every_tree():
  paths = explanations.example_paths(_ensemble(), _FEATURES)
  assert paths[0] == ([0, 1], [0.5, 1.0, 1.125])
  assert paths[1] == ([0, 1], [0.5, -1.0, -1.125])


def test_a_tree_still_a_single_leaf_adds_nothing():
  paths = explanations.example_paths(_ensemble(grown_second_tree=False),
                                     _FEATURES)
  assert paths == [([0], [0.5, 1.0]), ([0], [0.5, -1.0])]


def test_regression_contributions_are_the_logit_steps_by_feature():
  debug = tree_proto.DebugOutput(feature_ids=[0, 1],
                                 logits_path=[0.5, 1.0, 1.125])
  bias, contributions = explanations.bias_and_contributions(
      debug.SerializeToString(), ["a", "b"], classification=False)
  assert bias == pytest.approx(0.5)
  assert list(contributions.items()) == [("a", pytest.approx(0.5)),
                                         ("b", pytest.approx(0.125))]


def test_classification_contributions_are_probability_steps():
  debug = tree_proto.DebugOutput(feature_ids=[0, 1],
                                 logits_path=[0.0, 1.0, -1.0])
  bias, contributions = explanations.bias_and_contributions(
      debug.SerializeToString(), ["a", "b"], classification=True)
  sigmoid = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
  assert bias == pytest.approx(0.5)
  assert contributions["a"] == pytest.approx(sigmoid(1.0) - 0.5)
  assert contributions["b"] == pytest.approx(sigmoid(-1.0) - sigmoid(1.0))
  # Largest absolute contribution first.
  assert list(contributions) == ["b", "a"]


def test_dimensions_of_one_column_add_up():
  debug = tree_proto.DebugOutput(feature_ids=[0, 1],
                                 logits_path=[0.5, 1.0, 1.125])
  _, contributions = explanations.bias_and_contributions(
      debug.SerializeToString(), ["a", "a"], classification=False)
  assert dict(contributions) == {"a": pytest.approx(0.625)}


def test_the_graph_op_gives_one_debug_message_per_example():
  with tf.Graph().as_default():
    outputs = explanations.debug_outputs(
        tf.constant(_ensemble()), [tf.constant(f) for f in _FEATURES])
    with tf.compat.v1.Session() as session:
      messages = session.run(outputs)
  first = tree_proto.DebugOutput.FromString(messages[1])
  assert list(first.feature_ids) == [0, 1]
  assert list(first.logits_path) == pytest.approx([0.5, -1.0, -1.125])
