"""The BoostedTrees ops of the training graph, run by kernels.py's NumPy
kernels through `py_func` (TF 2.21 has no kernels for them).

The ensemble is a string variable (the serialized TreeEnsemble) and an
int64 stamp token, saved under tensorflow-estimator 2.8's checkpoint keys
`<scope>:0_serialized` / `<scope>:0_stamp` (inference.py restores the same
keys for evaluation). They are registered as resources, so the Scaffold
initializes them only when no checkpoint was restored.
"""

from typing import List, Sequence

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import resources

from estimator_compat.canned.boosted_trees import inference
from estimator_compat.canned.boosted_trees import kernels
from estimator_compat.canned.boosted_trees import quantiles
from estimator_compat.canned.boosted_trees import tree_proto


def _ensemble(serialized: bytes, stamp,
              logits_dimension: int = 1) -> kernels.Ensemble:
  return kernels.Ensemble(tree_proto.TreeEnsemble.FromString(serialized),
                          int(stamp), logits_dimension)


class EnsembleState:
  """The trained ensemble in the graph: reads, predictions and updates."""

  def __init__(self, scope: str, logits_dimension: int = 1):
    self._width = logits_dimension
    self.serialized, self.stamp = inference.ensemble_variables(scope)
    for variable in (self.serialized, self.stamp):
      resources.register_resource(variable.handle, variable.initializer,
                                  variable.is_initialized())

  def get_states(self):
    """(stamp, num_trees, num_finalized_trees, num_attempted_layers,
    last_layer_nodes_range) as tensors."""

    def run(serialized, stamp):
      stamp, trees, finalized, attempted, node_range = _ensemble(
          serialized, stamp).states()
      return (np.int64(stamp), np.int32(trees), np.int32(finalized),
              np.int32(attempted), np.array(node_range, np.int32))

    outputs = tf.compat.v1.py_func(
        run, [self.serialized.read_value(), self.stamp.read_value()],
        [tf.int64, tf.int32, tf.int32, tf.int32, tf.int32], stateful=True,
        name="BoostedTreesGetEnsembleStates")
    for output, shape in zip(outputs, ([], [], [], [], [2])):
      output.set_shape(shape)
    return outputs

  def training_predict(self, features: Sequence[tf.Tensor],
                       cached_tree_ids=None, cached_node_ids=None):
    """(logits `[batch, 1]` (since the cached nodes, when given), tree ids
    and node ids in the latest tree `[batch]`)."""
    cache = [] if cached_tree_ids is None else [cached_tree_ids,
                                                cached_node_ids]

    def run(serialized, stamp, *values):
      if cache:
        tree_ids, node_ids, values = values[0], values[1], values[2:]
      else:
        tree_ids = node_ids = None
      return kernels.training_predict(
          _ensemble(serialized, stamp, self._width), values, tree_ids,
          node_ids)

    logits, tree_ids, node_ids = tf.compat.v1.py_func(
        run, [self.serialized.read_value(), self.stamp.read_value()]
        + cache + list(features), [tf.float32, tf.int32, tf.int32],
        stateful=True, name="BoostedTreesTrainingPredict")
    batch = tf.shape(features[0])[0]
    return (tf.reshape(logits, [batch, self._width]),
            tf.reshape(tree_ids, [batch]),
            tf.reshape(node_ids, [batch]))

  def _write(self, serialized, stamp):
    return tf.group(self.serialized.assign(serialized),
                    self.stamp.assign(stamp))

  def center_bias(self, mean_gradients, mean_hessians, l1, l2):
    """Moves the bias; returns (update op, whether to keep centering)."""

    def run(serialized, stamp, gradient, hessian):
      ensemble = _ensemble(serialized, stamp)
      keep = kernels.center_bias(ensemble, np.ravel(gradient)[0],
                                 np.ravel(hessian)[0], l1, l2)
      return (ensemble.message.SerializeToString(), np.int64(ensemble.stamp),
              np.bool_(keep))

    serialized, stamp, keep = tf.compat.v1.py_func(
        run, [self.serialized.read_value(), self.stamp.read_value(),
              mean_gradients, mean_hessians],
        [tf.string, tf.int64, tf.bool], stateful=True,
        name="BoostedTreesCenterBias")
    keep.set_shape([])
    return self._write(serialized, stamp), keep

  def update(self, columns, learning_rate, max_depth, pruning_mode):
    """Grows a layer from the per-group best splits `columns` (a dict of
    update_ensemble_v2's list arguments)."""
    keys = sorted(columns)
    groups = len(columns[keys[0]])
    flat = [columns[key][group] for key in keys for group in range(groups)]

    def run(serialized, stamp, *values):
      ensemble = _ensemble(serialized, stamp, self._width)
      arguments = {key: [values[k * groups + g] for g in range(groups)]
                   for k, key in enumerate(keys)}
      kernels.update_ensemble_v2(ensemble, learning_rate=learning_rate,
                                 max_depth=max_depth,
                                 pruning_mode=pruning_mode, **arguments)
      return ensemble.message.SerializeToString(), np.int64(ensemble.stamp)

    serialized, stamp = tf.compat.v1.py_func(
        run, [self.serialized.read_value(), self.stamp.read_value()] + flat,
        [tf.string, tf.int64], stateful=True,
        name="BoostedTreesUpdateEnsembleV2")
    return self._write(serialized, stamp)


def aggregate_stats(node_ids, gradients, hessians, feature, max_splits: int,
                    num_buckets: int, logits_dimension: int = 1) -> tf.Tensor:
  """The `[max_splits, 1, num_buckets + 1, K + K * K]` stats summary of a
  feature."""

  def run(nodes, grads, hess, values):
    return kernels.aggregate_stats(nodes, grads, hess, values, max_splits,
                                   num_buckets)

  stats = tf.compat.v1.py_func(run, [node_ids, gradients, hessians, feature],
                               tf.float32, stateful=False,
                               name="BoostedTreesAggregateStats")
  stats.set_shape([max_splits, 1, num_buckets + 1,
                   logits_dimension + logits_dimension ** 2])
  return stats


def calculate_best_feature_split_v2(node_id_range, stats_summaries,
                                    split_types, candidate_feature_ids, l1,
                                    l2, tree_complexity, min_node_weight,
                                    logits_dimension: int = 1
                                    ) -> List[tf.Tensor]:
  """Each node's best split over a bucket group's features."""

  def run(node_range, *summaries):
    return kernels.calculate_best_feature_split_v2(
        node_range, summaries, [s.encode() for s in split_types],
        candidate_feature_ids, l1, l2, tree_complexity, min_node_weight,
        logits_dimension)

  return tf.compat.v1.py_func(
      run, [node_id_range] + list(stats_summaries),
      [tf.int32, tf.float32, tf.int32, tf.int32, tf.int32, tf.float32,
       tf.float32, tf.string], stateful=False,
      name="BoostedTreesCalculateBestFeatureSplitV2")


class QuantileAccumulator:
  """The float features' quantile streams and bucket boundaries.

  The streams live in Python, one set per graph, as TF 2.8's stream
  resource lived in its session (they were never saved either); the
  boundaries are variables saved under 2.8's keys
  (inference.boundary_variables), empty until the first flush.
  """

  def __init__(self, scope: str, name: str, epsilon: float,
               num_streams: int, num_quantiles: int):
    self._epsilon = epsilon
    self._num_quantiles = num_quantiles
    self._streams = quantiles.QuantileStreams(epsilon, num_streams)
    self._variables = inference.boundary_variables(scope, name, num_streams)
    for variable in self._variables:
      resources.register_resource(variable.handle, variable.initializer,
                                  variable.is_initialized())

  def bucket_boundaries(self) -> List[tf.Tensor]:
    return [tf.reshape(v.read_value(), [-1]) for v in self._variables]

  def add_summaries(self, float_features: Sequence[tf.Tensor], weights):
    """Adds each feature's batch summary to its stream (the
    MakeQuantileSummaries and AddSummaries kernels)."""

    def run(weight_values, *values):
      self._streams.add_summaries(quantiles.make_quantile_summaries(
          values, weight_values, self._epsilon))
      return np.bool_(True)

    return tf.compat.v1.py_func(
        run, [weights] + list(float_features), tf.bool, stateful=True,
        name="BoostedTreesQuantileStreamResourceAddSummaries").op

  def flush(self):
    """Sets the boundaries from the streams, which start over."""

    def run():
      return self._streams.flush(self._num_quantiles)

    boundaries = tf.compat.v1.py_func(
        run, [], [tf.float32] * len(self._variables), stateful=True,
        name="BoostedTreesQuantileStreamResourceFlush")
    return tf.group([v.assign(b) for v, b in zip(self._variables,
                                                 boundaries)])
