"""`train_in_memory=True`: TF 2.8's in-memory BoostedTrees training.

The input_fn gives the whole data set as one batch every step
(`n_batches_per_layer=1`), so each step sketches the quantiles, centers the
bias or grows a layer at once (growers.InMemoryGrower). As in 2.8, every
example's latest tree, node and logit are kept in variables
(`tree_ids_cache`, `node_ids_cache`, `logits_cache`), from which the next
step's prediction continues, and the transformed features are cached in
`cached_feature_<i>` / `are_features_cached` while the boundaries are not
ready; all of them are saved in the checkpoint under 2.8's keys.
"""

import tensorflow as tf

_NO_NODE = -1


def check(n_batches_per_layer: int, config) -> None:
  """Raises as 2.8 did when the in-memory trainer cannot run.

  Raises:
    AssertionError: n_batches_per_layer other than 1.
    ValueError: distributed training.
  """
  assert n_batches_per_layer == 1, (
      "When train_in_memory is enabled, input_fn should return the entire "
      "dataset as a single batch, and n_batches_per_layer should be set as "
      "1. Fix: pass n_batches_per_layer=1 and an unbatched input_fn.")
  if (not config.is_chief or config.num_worker_replicas > 1
      or config.num_ps_replicas > 0):
    raise ValueError("train_in_memory is supported only for non-distributed "
                     "training. Fix: train on one machine, or pass "
                     "train_in_memory=False.")


def _variable(initial_value, name: str) -> tf.Variable:
  return tf.compat.v1.Variable(initial_value=initial_value, trainable=False,
                               validate_shape=False, name=name,
                               use_resource=True)


class TrainingStateCache:
  """Each example's latest tree id, node id and logit."""

  def __init__(self, batch_size, logits_dimension: int):
    self._tree_ids = _variable(tf.zeros([batch_size], tf.int32),
                               "tree_ids_cache")
    self._node_ids = _variable(_NO_NODE * tf.ones([batch_size], tf.int32),
                               "node_ids_cache")
    self._logits = _variable(tf.zeros([batch_size, logits_dimension]),
                             "logits_cache")

  def lookup(self):
    """(tree ids, node ids, logits) as cached."""
    return (self._tree_ids.read_value(), self._node_ids.read_value(),
            self._logits.read_value())

  def insert(self, tree_ids, node_ids, logits):
    return tf.group([self._tree_ids.assign(tree_ids),
                     self._node_ids.assign(node_ids),
                     self._logits.assign(logits)], name="cache_insert")


def feature_cache_op(transformed, batch_size, are_boundaries_ready,
                     cond) -> tf.Operation:
  """Caches the transformed features once while the boundaries are not
  ready (2.8's cache, which training never reads back)."""
  cached = [_variable(tf.zeros([batch_size, 1], tf.int32),
                      f"cached_feature_{i}") for i in range(len(transformed))]
  are_cached = _variable(False, "are_features_cached")

  def cache():
    assigns = [v.assign(tf.cast(t, tf.int32))
               for v, t in zip(cached, transformed)]
    with tf.control_dependencies(assigns):
      return are_cached.assign(True).op

  def cache_once():
    return cond(are_cached, tf.no_op, cache)

  return cond(are_boundaries_ready, tf.no_op, cache_once)
