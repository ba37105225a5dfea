"""NumPy versions of the BoostedTrees training kernels TF 2.21 lacks.

Each function computes what the TF kernel of the same name computed (for
dense features) in float32, so results match TF 2.8.4's kernels bit for
bit on the recorded one-dimensional inputs
(tests/boosted_trees_goldens/kernels): stats aggregation, best split
search, bias centering, prediction during training, the ensemble states and
the layer-by-layer update (no pruning, pre- and post-pruning). With K > 1
logits the statistics hold K gradients and a K x K hessian, leaves hold K
values, and the split search solves each leaf with qr_solve (bias
centering stays one-dimensional, as in 2.8). The ensemble is a
TreeEnsemble message plus its stamp token.
"""

from typing import List, Sequence, Tuple

import numpy as np

from estimator_compat.canned.boosted_trees import qr_solve
from estimator_compat.canned.boosted_trees import tree_proto

_F32 = np.float32
_TOLERANCE = _F32(1e-15)
_LOWEST = np.finfo(np.float32).min
INEQUALITY_DEFAULT_LEFT = b"INEQUALITY_DEFAULT_LEFT"
INEQUALITY_DEFAULT_RIGHT = b"INEQUALITY_DEFAULT_RIGHT"
EQUALITY_DEFAULT_RIGHT = b"EQUALITY_DEFAULT_RIGHT"


def aggregate_stats(node_ids: np.ndarray, gradients: np.ndarray,
                    hessians: np.ndarray, feature: np.ndarray,
                    max_splits: int, num_buckets: int) -> np.ndarray:
  """BoostedTreesAggregateStats: per node, feature dimension and bucket, the
  sums of gradients (K) and hessians (K x K, flat), shaped
  `[max_splits, dimensions, num_buckets + 1, K + K * K]` (the last bucket
  is for missing values; examples of node -1 are not counted)."""
  feature = np.asarray(feature).reshape(len(node_ids), -1)
  gradients = np.asarray(gradients).reshape(len(node_ids), -1)
  hessians = np.asarray(hessians).reshape(len(node_ids), -1)
  width = gradients.shape[1]
  # Summed in float64 and rounded once: TF 2.8's results, to the bit.
  stats = np.zeros([max_splits, feature.shape[1], num_buckets + 1,
                    width + hessians.shape[1]], np.float64)
  for example, node in enumerate(node_ids):
    if node < 0:
      continue
    for dimension in range(feature.shape[1]):
      bucket = feature[example, dimension]
      stats[node, dimension, bucket, :width] += gradients[example]
      stats[node, dimension, bucket, width:] += hessians[example]
  return stats.astype(_F32)


def weight_and_gain(gradient, hessian, l1, l2) -> Tuple[np.float32,
                                                        np.float32]:
  """A leaf's weight and gain under L1/L2 (one-dimensional logits):
  weight = -(g - l1 sgn) / (h + l2), gain = -(g - l1 sgn) weight; zero where
  |g| <= l1 or h + l2 is not positive."""
  g, h, l1, l2 = _F32(gradient), _F32(hessian), _F32(l1), _F32(l2)
  if l1 > 0:
    if g > l1:
      g = _F32(g - l1)
    elif g < -l1:
      g = _F32(g + l1)
    else:
      return _F32(0), _F32(0)
  if _F32(h + l2) <= _TOLERANCE:
    return _F32(0), _F32(0)
  weight = _F32(-g / _F32(h + l2))
  return weight, _F32(-g * weight)


def weights_and_gain(gradients: np.ndarray, hessians: np.ndarray, l1,
                     l2) -> Tuple[np.ndarray, np.float32]:
  """A leaf's weights (K) and gain from its gradient sums (K) and hessian
  sums (K x K, column major): for K > 1, w = -(H + l2 I)^-1 g by the
  kernels' column-pivoting QR (L1 is not applied), gain = -g . w."""
  if len(gradients) == 1:
    weight, gain = weight_and_gain(gradients[0], hessians[0], l1, l2)
    return np.array([weight], _F32), gain
  width = len(gradients)
  matrix = np.asarray(hessians, _F32).reshape(width, width, order="F")
  matrix = (matrix + _F32(l2) * np.eye(width, dtype=_F32)).astype(_F32)
  weights = (-qr_solve.solve(matrix, gradients)).astype(_F32)
  gain = _F32(0)
  for g, w in zip(gradients, weights):
    gain = _F32(gain + _F32(_F32(-g) * w))
  return weights, gain


class _Best:
  """The best split of a node seen so far."""

  def __init__(self, width: int = 1):
    self.gain = _LOWEST
    self.bucket = self.dimension = 0
    self.split_type = b""
    self.width = width
    self.left = self.right = np.zeros([width], _F32)

  def offer(self, left_stats, right_stats, bucket, dimension, split_type,
            l1, l2):
    k = self.width
    left, left_gain = weights_and_gain(left_stats[:k], left_stats[k:], l1,
                                       l2)
    right, right_gain = weights_and_gain(right_stats[:k], right_stats[k:],
                                         l1, l2)
    gain = _F32(left_gain + right_gain)
    if _F32(gain - self.gain) >= _TOLERANCE:
      self.gain, self.bucket, self.dimension = gain, bucket, dimension
      self.split_type, self.left, self.right = split_type, left, right


def _inequality(summary, best, l1, l2):
  """Every bucket boundary of every dimension, with missing values sent
  left then right."""
  num_buckets = summary.shape[1] - 1
  for dimension in range(summary.shape[0]):
    stats = summary[dimension]
    cumulative = np.cumsum(stats, axis=0, dtype=_F32)
    total, missing = cumulative[-1], stats[num_buckets]
    for bucket in range(num_buckets):
      left = (cumulative[bucket] + missing).astype(_F32)
      best.offer(left, (total - left).astype(_F32), bucket, dimension,
                 INEQUALITY_DEFAULT_LEFT, l1, l2)
      left = cumulative[bucket]
      best.offer(left, (total - left).astype(_F32), bucket, dimension,
                 INEQUALITY_DEFAULT_RIGHT, l1, l2)


def _equality(summary, total, best, l1, l2):
  """Every category of every dimension against the rest."""
  num_buckets = summary.shape[1] - 1
  for dimension in range(summary.shape[0]):
    for bucket in range(num_buckets):
      stats = summary[dimension, bucket]
      best.offer(stats, (total - stats).astype(_F32), bucket, dimension,
                 EQUALITY_DEFAULT_RIGHT, l1, l2)


_PACKET = 8  # float32 lanes of the AVX packets TF 2.8's wheels used.


def _packet_column_sums(rows: np.ndarray) -> np.ndarray:
  """Column sums as Eigen 3.4 vectorizes them: the first row, then rows
  four at a time summed pairwise, then the rest one by one."""
  total = rows[0].astype(_F32)
  count, index = len(rows), 1
  stop = (count - 1) & ~3
  while index < stop:
    pairs = ((rows[index] + rows[index + 1]).astype(_F32)
             + (rows[index + 2] + rows[index + 3]).astype(_F32))
    total = (total + pairs.astype(_F32)).astype(_F32)
    index += 4
  for row in rows[index:]:
    total = (total + row).astype(_F32)
  return total


def _node_total(stats: np.ndarray, width: int) -> np.ndarray:
  """A node's gradient and hessian sums over its buckets, as the kernel's
  colwise sums gave them: the K gradient columns one by one, the K x K
  hessian columns (for K > 1) by packets of 8 and the rest one by one."""
  total = np.cumsum(stats, axis=0, dtype=_F32)[-1]
  hessians = stats.shape[1] - width
  if width > 1 and hessians >= _PACKET:
    packed = (hessians // _PACKET) * _PACKET
    total[width:width + packed] = _packet_column_sums(
        stats[:, width:width + packed])
  return total


def calculate_best_feature_split_v2(
    node_id_range: Sequence[int], stats_summaries: Sequence[np.ndarray],
    split_types: Sequence[bytes], candidate_feature_ids: Sequence[int], l1,
    l2, tree_complexity, min_node_weight,
    logits_dimension: int = 1) -> List[np.ndarray]:
  """BoostedTreesCalculateBestFeatureSplitV2.

  Per node of `node_id_range` whose total hessian reaches
  `min_node_weight`, the split with the largest gain over the candidate
  features (earlier features and buckets win ties).

  Returns:
    [node_ids, gains (less the parent's gain and tree_complexity),
    feature_ids, dimension_ids, thresholds, left_node_contribs,
    right_node_contribs, split_types].
  """
  columns = [[] for _ in range(8)]
  for node in range(node_id_range[0], node_id_range[1]):
    first = np.asarray(stats_summaries[0])[node, 0]
    k = logits_dimension
    total = _node_total(first, k)
    if k == 1:
      node_weight = abs(total[1])
    else:
      node_weight = _F32(0)
      for value in total[k:]:
        node_weight = _F32(node_weight + _F32(value * value))
      node_weight = _F32(np.sqrt(node_weight))
    if node_weight < _F32(min_node_weight):
      continue
    _, parent_gain = weights_and_gain(total[:k], total[k:], l1, l2)
    best, best_feature = _Best(k), None
    for index, split_type in enumerate(split_types):
      candidate = _Best(k)
      summary = np.asarray(stats_summaries[index])[node]
      if _as_bytes(split_type) == b"inequality":
        _inequality(summary, candidate, l1, l2)
      else:
        _equality(summary, total, candidate, l1, l2)
      if candidate.gain > best.gain:
        best, best_feature = candidate, candidate_feature_ids[index]
    if best.gain == _LOWEST:
      continue
    gain = _F32(_F32(best.gain - parent_gain) - _F32(tree_complexity))
    for column, value in zip(columns, (
        node, gain, best_feature, best.dimension, best.bucket, best.left,
        best.right, best.split_type)):
      column.append(value)
  dtypes = (np.int32, _F32, np.int32, np.int32, np.int32, _F32, _F32,
            np.bytes_)
  result = [np.array(column, dtype) for column, dtype in zip(columns, dtypes)]
  for contribs in (5, 6):
    result[contribs] = result[contribs].reshape(-1, logits_dimension)
  return result


def _as_bytes(value) -> bytes:
  return value if isinstance(value, bytes) else str(value).encode()


# The ensemble kernels work on a TreeEnsemble message and its stamp token.
_TREE_WEIGHT = _F32(1.0)
_MIN_DELTA_FOR_CENTER_BIAS = _F32(0.01)
NO_PRUNING, PRE_PRUNING, POST_PRUNING = 0, 1, 2
_DEFAULT_LEFT, _DEFAULT_RIGHT = 0, 1


class Ensemble:
  """The state of a BoostedTrees ensemble resource."""

  def __init__(self, message=None, stamp: int = 0,
               logits_dimension: int = 1):
    self.message = message if message is not None else (
        tree_proto.TreeEnsemble())
    self.stamp = stamp
    self.width = logits_dimension

  def add_tree(self, logit) -> int:
    """A tree of one leaf: `logit` (K > 1: a vector of zeros)."""
    tree_id = len(self.message.trees)
    node = self.message.trees.add().nodes.add()
    node.leaf.SetInParent()
    if self.width == 1:
      node.leaf.scalar = _F32(logit)
    else:
      node.leaf.vector.value.extend([0.0] * self.width)
    self.message.tree_weights.append(_TREE_WEIGHT)
    self.message.tree_metadata.add()
    return tree_id

  def states(self) -> Tuple[int, int, int, int, List[int]]:
    """BoostedTreesGetEnsembleStates: stamp, trees, finalized trees,
    attempted layers and the last layer's node range."""
    growing = self.message.growing_metadata
    finalized = sum(1 for m in self.message.tree_metadata if m.is_finalized)
    # Before the first layer the range is the root: [0, 1).
    return (self.stamp, len(self.message.trees), finalized,
            int(growing.num_layers_attempted),
            [growing.last_layer_node_start,
             growing.last_layer_node_end or 1])


def _node_value(node):
  if node.WhichOneof("node") == "leaf":
    return node.leaf.scalar
  return node.metadata.original_leaf.scalar


def _leaf_values(leaf, width: int) -> np.ndarray:
  """A leaf's K values (an empty vector: zeros)."""
  if width == 1:
    return np.array([leaf.scalar], _F32)
  values = np.array(leaf.vector.value, _F32)
  return values if len(values) else np.zeros([width], _F32)


def _set_leaf(leaf, values, width: int) -> None:
  if width == 1:
    leaf.scalar = _F32(values[0])
  else:
    del leaf.vector.value[:]
    leaf.vector.value.extend([float(v) for v in values])


def _node_values(node, width: int) -> np.ndarray:
  if node.WhichOneof("node") == "leaf":
    return _leaf_values(node.leaf, width)
  return _leaf_values(node.metadata.original_leaf, width)


def _next_node(node, features, example):
  kind = node.WhichOneof("node")
  split = getattr(node, kind)
  bucket = features[split.feature_id][example, split.dimension_id]
  if kind == "bucketized_split":
    goes_left = bucket <= split.threshold
  else:
    goes_left = bucket == split.value
  return split.left_id if goes_left else split.right_id


def _post_prune_correction(ensemble: Ensemble, tree_id: int,
                           node_id: int) -> Tuple[int, np.ndarray]:
  """Where a cached node went when its tree was post-pruned, and the logit
  change that pruning made there (none for other trees)."""
  meta = ensemble.message.tree_metadata[tree_id]
  change = np.zeros([ensemble.width], _F32)
  if meta.is_finalized and len(meta.post_pruned_nodes_meta):
    update = meta.post_pruned_nodes_meta[node_id]
    for i, value in enumerate(update.logit_change[:ensemble.width]):
      change[i] = value
    return update.new_node_id, change
  return node_id, change


def training_predict(ensemble: Ensemble, features: Sequence[np.ndarray],
                     cached_tree_ids=None, cached_node_ids=None
                     ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
  """BoostedTreesTrainingPredict: each example's logits' change since its
  cached (tree, node) (node -1 or no cache: its whole logits), the latest
  tree's id and the node it reaches there."""
  batch = features[0].shape[0]
  trees, width = ensemble.message.trees, ensemble.width
  logits = np.zeros([batch, width], _F32)
  if cached_tree_ids is None:
    cached_tree_ids = np.zeros([batch], np.int32)
    cached_node_ids = np.full([batch], -1, np.int32)
  if not trees:
    return (logits, np.asarray(cached_tree_ids, np.int32).reshape(batch),
            np.zeros([batch], np.int32))
  node_ids = np.zeros([batch], np.int32)
  latest = len(trees) - 1
  for example in range(batch):
    tree_id = int(cached_tree_ids[example])
    node_id = int(cached_node_ids[example])
    partial = np.zeros([width], _F32)
    if node_id >= 0:
      node_id, partial = _post_prune_correction(ensemble, tree_id, node_id)
      partial = (partial - _node_values(trees[tree_id].nodes[node_id],
                                        width)).astype(_F32)
    else:
      node_id = 0
    total = np.zeros([width], _F32)
    while True:
      node = trees[tree_id].nodes[node_id]
      if node.WhichOneof("node") != "leaf":
        node_id = _next_node(node, features, example)
        continue
      weight = _F32(ensemble.message.tree_weights[tree_id])
      total = (total + weight * (partial + _leaf_values(
          node.leaf, width)).astype(_F32)).astype(_F32)
      partial = np.zeros([width], _F32)
      if tree_id == latest:
        break
      tree_id, node_id = tree_id + 1, 0
    logits[example] = total
    node_ids[example] = node_id
  return logits, np.full([batch], latest, np.int32), node_ids


def center_bias(ensemble: Ensemble, mean_gradient, mean_hessian, l1,
                l2) -> bool:
  """BoostedTreesCenterBias: moves the bias (tree 0's root) by a Newton
  step; False once the step is under 1% of the bias."""
  ensemble.stamp += 1
  logit, _ = weight_and_gain(mean_gradient, mean_hessian, l1, l2)
  if not ensemble.message.trees:
    ensemble.add_tree(logit)
    return True
  root = ensemble.message.trees[0].nodes[0]
  current = _F32(_node_value(root))
  keep_centering = bool(abs(_F32(logit / current))
                        > _MIN_DELTA_FOR_CENTER_BIAS)
  root.leaf.scalar = _F32(current + logit)
  return keep_centering


def _best_splits_per_node(learning_rate, feature_ids, node_ids, gains,
                          thresholds, dimension_ids, left_contribs,
                          right_contribs, split_types):
  """The best candidate of each node over the features (ties: the lower
  feature id), contributions scaled by the learning rate."""
  best = {}
  for group in range(len(node_ids)):
    for index, node in enumerate(np.asarray(node_ids[group])):
      gain = _F32(gains[group][index])
      candidate = {
          "feature_id": int(np.ravel(feature_ids[group])[index]),
          "gain": gain, "threshold": int(thresholds[group][index]),
          "dimension_id": int(dimension_ids[group][index]),
          "left": (_F32(learning_rate) * np.asarray(
              left_contribs[group][index], _F32).reshape(-1)).astype(_F32),
          "right": (_F32(learning_rate) * np.asarray(
              right_contribs[group][index], _F32).reshape(-1)).astype(_F32),
          "split_type": _as_bytes(split_types[group][index])}
      current = best.get(int(node))
      if current is not None and abs(_F32(gain - current["gain"])) < (
          _TOLERANCE):
        if candidate["feature_id"] < current["feature_id"]:
          best[int(node)] = candidate
      elif current is None or _F32(gain - current["gain"]) >= _TOLERANCE:
        best[int(node)] = candidate
  return dict(sorted(best.items()))


def _grow_attempt(ensemble: Ensemble) -> int:
  """Counts an attempted layer (and tree); the tree to grow."""
  message = ensemble.message
  growing = message.growing_metadata
  growing.num_layers_attempted += 1
  trees = message.trees
  if not trees or ((len(trees) == 1 or message.tree_metadata[-2].is_finalized)
                   and len(trees[-1].nodes) == 1):
    growing.num_trees_attempted += 1
  if not trees:
    return ensemble.add_tree(0.0)
  return len(trees) - 1


def _add_split(tree, node_id, candidate, width: int = 1):
  """Turns leaf `node_id` into the candidate's split with two new leaves
  (its value plus each side's contribution)."""
  left_id, right_id = len(tree.nodes), len(tree.nodes) + 1
  left, right = tree.nodes.add(), tree.nodes.add()
  node = tree.nodes[node_id]
  is_leaf = node.WhichOneof("node") == "leaf"
  has_leaf_value = is_leaf and (node.leaf.scalar != 0 if width == 1
                                else len(node.leaf.vector.value) > 0)
  if node_id != 0 or has_leaf_value:
    node.metadata.original_leaf.CopyFrom(node.leaf)
  node.metadata.gain = candidate["gain"]
  previous = _leaf_values(node.metadata.original_leaf, width)
  _set_leaf(left.leaf, (previous + candidate["left"]).astype(_F32), width)
  _set_leaf(right.leaf, (previous + candidate["right"]).astype(_F32),
            width)
  if candidate["split_type"] == EQUALITY_DEFAULT_RIGHT:
    split = node.categorical_split
    split.value = candidate["threshold"]
  else:
    split = node.bucketized_split
    split.threshold = candidate["threshold"]
    split.default_direction = (
        _DEFAULT_RIGHT if candidate["split_type"] == INEQUALITY_DEFAULT_RIGHT
        else _DEFAULT_LEFT)
  split.feature_id = candidate["feature_id"]
  split.dimension_id = candidate["dimension_id"]
  split.left_id, split.right_id = left_id, right_id


def _split_of(node):
  return getattr(node, node.WhichOneof("node"))


def _post_prune(ensemble: Ensemble, tree_id: int) -> None:
  """Collapses, bottom up, every split with negative gain whose children
  are leaves back into its original leaf, renumbers the remaining nodes and
  records for each old node id its new id and the change of its logit."""
  tree, width = ensemble.message.trees[tree_id], ensemble.width
  count = len(tree.nodes)
  if not count:
    return
  parents = list(range(count))
  changes = [np.zeros([width], _F32)] * count
  deleted = []

  def prune(node_id):
    node = tree.nodes[node_id]
    if node.WhichOneof("node") == "leaf":
      return
    split = _split_of(node)
    left, right = split.left_id, split.right_id
    prune(left)
    prune(right)
    if not (node.metadata.gain < 0
            and tree.nodes[left].WhichOneof("node") == "leaf"
            and tree.nodes[right].WhichOneof("node") == "leaf"):
      return
    deleted.extend([left, right])
    had_value = node.metadata.HasField("original_leaf")
    node.leaf.CopyFrom(node.metadata.original_leaf)
    parent_value = (_leaf_values(node.leaf, width) if had_value
                    else np.zeros([width], _F32))
    for child in (left, right):
      parents[child] = node_id
      changes[child] = (parent_value - _leaf_values(
          tree.nodes[child].leaf, width)).astype(_F32)
    node.ClearField("metadata")

  prune(0)
  if not deleted:
    return
  deleted = sorted(deleted)
  old_to_new, meta = {}, ensemble.message.tree_metadata[tree_id]
  for node_id in range(count):
    update = meta.post_pruned_nodes_meta.add()
    if node_id in deleted:
      total, current = np.zeros([width], _F32), node_id
      while parents[current] != current:
        total = (total + changes[current]).astype(_F32)
        current = parents[current]
      update.new_node_id = old_to_new[current]
      update.logit_change.extend([float(v) for v in total])
    else:
      old_to_new[node_id] = len(old_to_new)
      update.new_node_id = old_to_new[node_id]
      update.logit_change.extend([0.0] * width)
  kept = [tree.nodes[i] for i in range(count) if i not in deleted]
  kept = [type(node).FromString(node.SerializeToString()) for node in kept]
  for node in kept:
    if node.WhichOneof("node") != "leaf":
      split = _split_of(node)
      split.left_id = old_to_new[split.left_id]
      split.right_id = old_to_new[split.right_id]
  del tree.nodes[:]
  tree.nodes.extend(kept)


def update_ensemble_v2(ensemble: Ensemble, feature_ids, node_ids, gains,
                       thresholds, dimension_ids, left_node_contribs,
                       right_node_contribs, split_types, learning_rate,
                       max_depth: int, pruning_mode: int) -> None:
  """BoostedTreesUpdateEnsembleV2 (one-dimensional logits): adds each
  node's best split as a layer of the growing tree; a tree of `max_depth`
  layers is finalized (and post-pruned) and a new one started."""
  ensemble.stamp += 1
  best = _best_splits_per_node(learning_rate, feature_ids, node_ids, gains,
                               thresholds, dimension_ids, left_node_contribs,
                               right_node_contribs, split_types)
  tree_id = _grow_attempt(ensemble)
  if not best:
    return
  message = ensemble.message
  tree = message.trees[tree_id]
  metadata = message.tree_metadata[tree_id]
  start = len(tree.nodes)
  split_happened = False
  for node_id, candidate in best.items():
    if pruning_mode == PRE_PRUNING and candidate["gain"] < 0:
      continue
    _add_split(tree, node_id, candidate, ensemble.width)
    split_happened = True
  end = len(tree.nodes)
  if not split_happened:
    return
  metadata.num_layers_grown += 1
  if metadata.num_layers_grown >= max_depth:
    start, end = 0, 1
    metadata.is_finalized = True
    if pruning_mode == POST_PRUNING:
      _post_prune(ensemble, tree_id)
    ensemble.add_tree(0.0)
  message.growing_metadata.last_layer_node_start = start
  message.growing_metadata.last_layer_node_end = end
