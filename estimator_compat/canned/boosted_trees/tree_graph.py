"""The ensemble's prediction (BoostedTreesPredict) with TF's standard ops.

TF 2.21 registers no kernel for any BoostedTrees op, and a `py_func` does
not survive a SavedModel, so evaluation, prediction and the exported
serving graph walk the trees with ops every TensorFlow has: `DecodeProtoV2`
reads the serialized TreeEnsemble message (the checkpoint's
`boosted_trees:0_serialized`, restored into a string variable) into
per-node arrays, a `while_loop` moves every (example, tree) pair one level
down until all stand on a leaf, and the trees' weighted leaf values are
added tree after tree in float32, in the order the kernel added them.
"""

from typing import Sequence

import tensorflow as tf
from google.protobuf import descriptor_pb2

from estimator_compat.canned.boosted_trees import tree_proto


def _descriptor_source() -> bytes:
  """The message schema as `decode_proto` reads it inline."""
  files = descriptor_pb2.FileDescriptorSet()
  files.file.add().CopyFrom(tree_proto.file_descriptor())
  return b"bytes://" + files.SerializeToString()


_DESCRIPTOR_SOURCE = _descriptor_source()


def _decode(messages: tf.Tensor, message_type: str, fields, dtypes):
  """Field values of `messages` (padded with the defaults) and their
  counts, `[..., fields]`."""
  return tf.io.decode_proto(messages, f"{tree_proto.PACKAGE}.{message_type}",
                            fields, dtypes,
                            descriptor_source=_DESCRIPTOR_SOURCE)


def _nodes(serialized: tf.Tensor, logits_dimension: int):
  """The ensemble as `[trees, nodes]` arrays (a padded node is a leaf of
  value 0) and the `[trees]` tree weights."""
  _, (trees, weights) = _decode(tf.reshape(serialized, [1]), "TreeEnsemble",
                                ["trees", "tree_weights"],
                                [tf.string, tf.float32])
  trees, weights = trees[0], weights[0]
  _, (nodes,) = _decode(trees, "Tree", ["nodes"], [tf.string])
  kinds, (leaf, bucketized, categorical) = _decode(
      nodes, "Node", ["leaf", "bucketized_split", "categorical_split"],
      [tf.string] * 3)
  is_bucketized, is_categorical = kinds[..., 1] > 0, kinds[..., 2] > 0
  split_fields = ["feature_id", "dimension_id", "left_id", "right_id"]
  _, bucketized_values = _decode(bucketized[..., 0], "BucketizedSplit",
                                 split_fields + ["threshold"],
                                 [tf.int32] * 5)
  _, categorical_values = _decode(categorical[..., 0], "CategoricalSplit",
                                  split_fields + ["value"], [tf.int32] * 5)
  # feature_id, dimension_id, left_id, right_id and threshold / value.
  split = [tf.where(is_categorical, c[..., 0], b[..., 0])
           for b, c in zip(bucketized_values, categorical_values)]
  leaf_kinds, (vector, scalar) = _decode(leaf[..., 0], "Leaf",
                                         ["vector", "scalar"],
                                         [tf.string, tf.float32])
  _, (vector_values,) = _decode(vector[..., 0], "Vector", ["value"],
                                [tf.float32])
  vector_values = tf.pad(
      vector_values,
      [[0, 0], [0, 0], [0, logits_dimension - tf.shape(vector_values)[2]]])
  leaf_values = tf.where(leaf_kinds[..., :1] > 0,
                         vector_values[..., :logits_dimension],
                         tf.broadcast_to(scalar, tf.concat(
                             [tf.shape(scalar)[:2], [logits_dimension]], 0)))
  return (is_bucketized | is_categorical, is_categorical, split,
          leaf_values, weights)


def predict(serialized: tf.Tensor, features: Sequence[tf.Tensor],
            logits_dimension: int) -> tf.Tensor:
  """The `[batch, logits_dimension]` logits of the serialized ensemble for
  bucketized `features` (each `[batch, dimensions]`), as
  BoostedTreesPredict gave them.

  Each example goes left where its bucket is <= a bucketized split's
  threshold (== a categorical split's value); its logit is the sum over
  trees of tree weight x leaf value.
  """
  with tf.compat.v1.name_scope("BoostedTreesPredict"):
    is_split, is_categorical, split, leaf_values, weights = _nodes(
        serialized, logits_dimension)
    feature_id, dimension_id, left_id, right_id, threshold = split
    columns = [tf.cast(tf.reshape(f, [tf.shape(f)[0], -1]), tf.int32)
               for f in features]
    widths = tf.stack([tf.shape(c)[1] for c in columns])
    offsets = tf.cumsum(widths, exclusive=True)
    buckets = tf.concat(columns, axis=1)
    batch = tf.shape(buckets)[0]
    num_trees = tf.shape(weights)[0]
    trees = tf.broadcast_to(tf.range(num_trees), [batch, num_trees])
    examples = tf.broadcast_to(tf.range(batch)[:, None], [batch, num_trees])

    def node_values(values, node_ids):
      return tf.gather_nd(values, tf.stack([trees, node_ids], axis=-1))

    def not_done(node_ids):
      return tf.reduce_any(node_values(is_split, node_ids))

    def step(node_ids):
      column = (tf.gather(offsets, node_values(feature_id, node_ids))
                + node_values(dimension_id, node_ids))
      # A finished pair's column may be any; clip it to a valid one.
      column = tf.clip_by_value(column, 0, tf.maximum(tf.shape(buckets)[1]
                                                      - 1, 0))
      bucket = tf.gather_nd(buckets, tf.stack([examples, column], axis=-1))
      limit = node_values(threshold, node_ids)
      goes_left = tf.where(node_values(is_categorical, node_ids),
                           tf.equal(bucket, limit), bucket <= limit)
      next_ids = tf.where(goes_left, node_values(left_id, node_ids),
                          node_values(right_id, node_ids))
      return (tf.where(node_values(is_split, node_ids), next_ids,
                       node_ids),)

    leaves = tf.while_loop(not_done, step,
                           [tf.zeros([batch, num_trees], tf.int32)])[0]
    contributions = weights[:, None, None] * tf.transpose(
        node_values(leaf_values, leaves), [1, 0, 2])

    def add_tree(tree, logits):
      return tree + 1, logits + tf.reshape(contributions[tree],
                                           [batch, logits_dimension])

    _, logits = tf.while_loop(
        lambda tree, _: tree < num_trees, add_tree,
        [tf.constant(0), tf.zeros([batch, logits_dimension])])
  return tf.reshape(logits, [batch, logits_dimension])
