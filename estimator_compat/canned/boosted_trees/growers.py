"""Growing the ensemble one layer per `n_batches_per_layer` batches.

Each training batch adds its per-node, per-bucket gradient and hessian sums
(stats summaries) to a conditional accumulator stamped with the ensemble's
stamp token; once every accumulator holds `n_batches_per_layer` batches, the
chief takes their means, picks each node's best split
(CalculateBestFeatureSplitV2 per bucket group) and grows the ensemble by a
layer (UpdateEnsembleV2), which bumps the stamp so that stale summaries are
dropped. Bias centering waits for its batches the same way. The ensemble
kernels are kernels.py's, run by graph_kernels.py; everything runs in a TF1
graph.
"""

import collections
from typing import List

import tensorflow as tf
from tensorflow.python.ops import boosted_trees_ops
from tensorflow.python.ops import cond_v2

from estimator_compat.canned.boosted_trees import graph_kernels

TreeHParams = collections.namedtuple("TreeHParams", [
    "n_trees", "max_depth", "learning_rate", "l1", "l2", "tree_complexity",
    "min_node_weight", "center_bias", "pruning_mode",
    "quantile_sketch_epsilon"
])


def validate(hparams: TreeHParams) -> None:
  """Raises ValueError for a non-positive size or rate, or a negative
  regularization."""
  for name in ("n_trees", "max_depth", "learning_rate",
               "quantile_sketch_epsilon"):
    if getattr(hparams, name) <= 0:
      raise ValueError(f"Expected {name} > 0, received: "
                       f"{getattr(hparams, name)}. Fix: pass a positive "
                       f"{name}.")
  for name in ("l1", "l2", "tree_complexity", "min_node_weight"):
    if getattr(hparams, name) < 0:
      raise ValueError(f"Expected {name} >= 0, received: "
                       f"{getattr(hparams, name)}. Fix: pass {name} >= 0.")


def max_splits(hparams: TreeHParams) -> int:
  """The most nodes a tree of `max_depth` can split."""
  return (1 << hparams.max_depth) - 1


def cond(predicate, true_fn, false_fn, name=None):
  """A v2 cond even in a TF1 graph (the Estimator forced cond_v2 too)."""
  return cond_v2.cond_v2(predicate, true_fn, false_fn, name=name)


def _accumulator(shape, shared_name: str):
  return tf.compat.v1.ConditionalAccumulator(
      dtype=tf.float32, shape=shape, shared_name=shared_name)


def parse_pruning_mode(hparams: TreeHParams):
  """The kernels' pruning mode for `hparams.pruning_mode`.

  Raises:
    ValueError: an unknown mode, tree_complexity without pruning, or
      pruning without tree_complexity.
  """
  mode = boosted_trees_ops.PruningMode.from_str(hparams.pruning_mode)
  no_pruning = boosted_trees_ops.PruningMode.NO_PRUNING
  if hparams.tree_complexity > 0 and mode == no_pruning:
    raise ValueError(
        "Tree complexity have no effect unless pruning mode is chosen. Fix: "
        "pass pruning_mode='pre' or 'post', or tree_complexity=0.")
  if hparams.tree_complexity <= 0 and mode != no_pruning:
    raise ValueError("For pruning, tree_complexity must be positive. Fix: "
                     "pass tree_complexity > 0, or pruning_mode='none'.")
  return mode


class _Grower:
  """What both growers share: centering the bias and growing a layer from
  stats summaries."""

  def __init__(self, tree_ensemble, hparams: TreeHParams, feature_ids: List,
               logits_dimension: int = 1):
    self._ensemble = tree_ensemble
    self._hparams = hparams
    self._pruning_mode = parse_pruning_mode(hparams)
    self._feature_ids = feature_ids
    self._logits_dimension = logits_dimension

  def _center(self, center_bias_var, mean_gradients, mean_hessians):
    update, still_centering = self._ensemble.center_bias(
        mean_gradients, mean_hessians, self._hparams.l1, self._hparams.l2)
    with tf.control_dependencies([update]):
      return center_bias_var.assign(still_centering)

  def _grow_layer(self, stats_summaries, last_layer_nodes_range,
                  split_types):
    columns = collections.defaultdict(list)
    for group, ids in enumerate(self._feature_ids):
      outputs = graph_kernels.calculate_best_feature_split_v2(
          last_layer_nodes_range, stats_summaries[group], split_types[group],
          ids, self._hparams.l1, self._hparams.l2,
          self._hparams.tree_complexity, self._hparams.min_node_weight,
          self._logits_dimension)
      for key, value in zip(("node_ids", "gains", "feature_ids",
                             "dimension_ids", "thresholds",
                             "left_node_contribs", "right_node_contribs",
                             "split_types"), outputs):
        columns[key].append(value)
    return self._ensemble.update(
        dict(columns), learning_rate=self._hparams.learning_rate,
        max_depth=self._hparams.max_depth, pruning_mode=self._pruning_mode)


class InMemoryGrower(_Grower):
  """Grows `tree_ensemble` from the whole data set, one batch per step
  (train_in_memory): the quantile sketch, each bias centering step and
  each layer take one step, without accumulators."""

  def chief_init_op(self):
    return tf.no_op()

  def accumulate_quantiles(self, quantile_accumulator, float_features,
                           weights, are_boundaries_ready):
    """Sketches the batch and sets the boundaries at once."""
    added = quantile_accumulator.add_summaries(float_features, weights)
    with tf.control_dependencies([added]):
      flushed = quantile_accumulator.flush()
    with tf.control_dependencies([flushed]):
      return are_boundaries_ready.assign(True).op

  def center_bias(self, center_bias_var, gradients, hessians):
    """A centering step from the batch's mean gradient and hessian."""
    return self._center(
        center_bias_var,
        tf.expand_dims(tf.math.reduce_mean(gradients, 0), 0),
        tf.expand_dims(tf.math.reduce_mean(hessians, 0), 0))

  def grow_tree(self, stats_summaries, last_layer_nodes_range, split_types):
    """A layer from the batch's stats summaries."""
    return self._grow_layer(stats_summaries, last_layer_nodes_range,
                            split_types)


class AccumulatorGrower(_Grower):
  """Grows `tree_ensemble` from batches accumulated across steps."""

  def __init__(self, tree_ensemble, hparams: TreeHParams, stamp_token,
               n_batches_per_layer,
               bucket_sizes: List[int], feature_ids: List, is_chief: bool,
               logits_dimension: int):
    super().__init__(tree_ensemble, hparams, feature_ids, logits_dimension)
    self._stamp = stamp_token
    self._n_batches = n_batches_per_layer
    self._is_chief = is_chief
    self._logits_dimension = logits_dimension
    self._init_ops = []
    self._stats_accumulators = []
    stats_size = logits_dimension + logits_dimension * logits_dimension
    for index, (size, ids) in enumerate(zip(bucket_sizes, feature_ids)):
      # [features, nodes, dimensions, buckets + the missing bucket, stats]
      accumulator = _accumulator(
          [len(ids), max_splits(hparams), 1, size + 1, stats_size],
          f"numeric_stats_summary_accumulator_{index}")
      self._init_ops.append(accumulator.set_global_step(stamp_token))
      self._stats_accumulators.append(accumulator)
    if hparams.center_bias:
      self._bias_accumulator = _accumulator([2, 1], "bias_accumulator")
      self._init_ops.append(self._bias_accumulator.set_global_step(
          stamp_token))

  def accumulate_quantiles(self, quantile_accumulator, float_features,
                           weights, are_boundaries_ready):
    """Adds the batch's float values to the quantile streams; once
    `n_batches_per_layer` batches are in, the chief sets the bucket
    boundaries and marks them ready."""
    added = quantile_accumulator.add_summaries(float_features, weights)
    batches = _accumulator([], "quantile_summary_accum")
    update = tf.group(added, batches.set_global_step(self._stamp),
                      batches.apply_grad(tf.constant(0.), self._stamp))
    if not self._is_chief:
      return update
    with tf.control_dependencies([update]):

      def flush():
        return tf.group(batches.take_grad(1), quantile_accumulator.flush(),
                        are_boundaries_ready.assign(True).op)

      return cond(tf.math.greater_equal(batches.num_accumulated(),
                                        self._n_batches),
                  flush, tf.no_op,
                  name="wait_until_quaniles_accumulated")

  def chief_init_op(self):
    """Stamps the accumulators once the chief's session starts."""
    return tf.group(self._init_ops)

  def center_bias(self, center_bias_var, gradients, hessians):
    """Adds the batch's mean gradient and hessian; after enough batches the
    chief sets the bias (and restamps the stats accumulators once done)."""
    means = tf.math.reduce_mean(tf.stack([gradients, hessians], axis=0),
                                axis=1)
    apply = self._bias_accumulator.apply_grad(means, self._stamp)
    with tf.control_dependencies([apply]):
      if not self._is_chief:
        return tf.no_op()

      def restamp():
        return tf.group([acc.set_global_step(self._stamp + 1)
                         for acc in self._stats_accumulators])

      def center():
        mean_gradient, mean_hessian = tf.unstack(
            self._bias_accumulator.take_grad(1), axis=0)
        centered = self._center(center_bias_var,
                                tf.expand_dims(mean_gradient, 0),
                                tf.expand_dims(mean_hessian, 0))
        with tf.control_dependencies([centered]):
          return cond(center_bias_var, tf.no_op, restamp)

      return cond(
          tf.math.greater_equal(self._bias_accumulator.num_accumulated(),
                                self._n_batches),
          center, tf.no_op, name="wait_until_n_batches_for_bias_accumulated")

  def grow_tree(self, stats_summaries, last_layer_nodes_range, split_types):
    """Adds the batch's stats summaries; once each accumulator holds
    `n_batches_per_layer` batches the chief grows a layer."""
    applies = [acc.apply_grad(tf.stack(summaries, axis=0), self._stamp)
               for acc, summaries in zip(self._stats_accumulators,
                                         stats_summaries)]
    with tf.control_dependencies(applies):
      if not self._is_chief:
        return tf.no_op()
      fewest = tf.math.reduce_min(tf.stack(
          [acc.num_accumulated() for acc in self._stats_accumulators]))

      def grow():
        accumulated = [tf.unstack(acc.take_grad(1), axis=0)
                       for acc in self._stats_accumulators]
        return self._grow_layer(accumulated, last_layer_nodes_range,
                                split_types)

      return cond(tf.math.greater_equal(fewest, self._n_batches), grow,
                  tf.no_op, name="wait_until_n_batches_accumulated")
