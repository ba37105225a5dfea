"""Directional feature contributions (`experimental_predict_with_explanations`).

Each example's path through the ensemble gives its logit after the bias and
after every split (BoostedTreesExampleDebugOutputs' `logits_path`) and the
feature each split used; the change of the prediction (sigmoid of the logit
for a classifier) at each step is credited to that feature, summed per
feature column and sorted by absolute value, as tensorflow-estimator 2.8
did.
"""

import collections
from typing import Dict, List, Sequence, Tuple

import numpy as np
import tensorflow as tf

from estimator_compat.canned.boosted_trees import tree_proto

DEBUG_KEY = "_serialized_debug_outputs_proto"


def _node_logit(node) -> float:
  """A node's value: its leaf, or for a split node the leaf it replaced."""
  if node.WhichOneof("node") == "leaf":
    return node.leaf.scalar
  return node.metadata.original_leaf.scalar


def example_paths(serialized: bytes, features: Sequence[np.ndarray]
                  ) -> List[Tuple[List[int], List[float]]]:
  """Per example, the split feature ids and the logits along its path."""
  ensemble = tree_proto.TreeEnsemble.FromString(serialized)
  batch = features[0].shape[0]
  paths = []
  for example in range(batch):
    tree_logit = (ensemble.tree_weights[0]
                  * _node_logit(ensemble.trees[0].nodes[0]))
    feature_ids, logits_path = [], [tree_logit]
    past_trees_logit = 0.0
    for tree_id, tree in enumerate(ensemble.trees):
      node_id = 0
      while tree.nodes[node_id].WhichOneof("node") != "leaf":
        split = tree.nodes[node_id].bucketized_split
        feature_ids.append(split.feature_id)
        bucket = features[split.feature_id][example, split.dimension_id]
        node_id = split.left_id if bucket <= split.threshold else (
            split.right_id)
        tree_logit = (ensemble.tree_weights[tree_id]
                      * _node_logit(tree.nodes[node_id]))
        logits_path.append(tree_logit + past_trees_logit)
      # A leaf: the bias tree's root, or a leaf below a split.
      if tree_id == 0 or node_id > 0:
        past_trees_logit += tree_logit
    paths.append((feature_ids, logits_path))
  return paths


def debug_outputs(serialized: tf.Tensor,
                  features: Sequence[tf.Tensor]) -> tf.Tensor:
  """The `[batch]` serialized DebugOutput messages, in the graph."""

  def run(serialized_value, *feature_values):
    messages = []
    for feature_ids, logits_path in example_paths(serialized_value,
                                                  feature_values):
      message = tree_proto.DebugOutput(feature_ids=feature_ids,
                                       logits_path=logits_path)
      messages.append(message.SerializeToString())
    return np.array(messages, dtype=object)

  outputs = tf.compat.v1.py_func(run, [serialized] + list(features),
                                 tf.string, stateful=False,
                                 name="BoostedTreesExampleDebugOutputs")
  return tf.reshape(outputs, tf.shape(features[0])[:1])


def bias_and_contributions(serialized_debug: bytes,
                           feature_names: Sequence[str],
                           classification: bool
                           ) -> Tuple[float, Dict[str, float]]:
  """The example's bias (prediction of the bias alone) and its
  contribution per feature column, largest absolute value first."""
  message = tree_proto.DebugOutput.FromString(serialized_debug)
  predictions = np.array(message.logits_path, dtype=np.float64)
  if classification:
    predictions = 1 / (1 + np.exp(-predictions))
  deltas = predictions[1:] - predictions[:-1]
  contributions = np.bincount(np.array(message.feature_ids, dtype=np.int64),
                              weights=deltas,
                              minlength=len(feature_names))
  sums = {}
  for name, value in zip(feature_names, contributions):
    sums[name] = sums.setdefault(name, 0) + value
  ordered = collections.OrderedDict(
      sorted(sums.items(), key=lambda item: abs(item[1]), reverse=True))
  return predictions[0], ordered
