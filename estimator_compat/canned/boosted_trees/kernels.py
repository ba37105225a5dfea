"""NumPy versions of the BoostedTrees training kernels TF 2.21 lacks.

Each function computes what the TF kernel of the same name computed (for
one-dimensional logits and dense features), in float32 and in the kernel's
order of summation, so results match to the last bits where the kernel's
did; tests compare them with TF 2.8.4's kernels on recorded inputs
(tests/boosted_trees_goldens/kernels).
"""

from typing import List, Sequence, Tuple

import numpy as np

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
  sums of gradients and hessians, shaped
  `[max_splits, dimensions, num_buckets + 1, 2]` (the last bucket is for
  missing values; examples of node -1 are not counted)."""
  feature = np.asarray(feature).reshape(len(node_ids), -1)
  # Summed in float64 and rounded once: TF 2.8's results, to the bit.
  stats = np.zeros([max_splits, feature.shape[1], num_buckets + 1, 2],
                   np.float64)
  for example, node in enumerate(node_ids):
    if node < 0:
      continue
    for dimension in range(feature.shape[1]):
      bucket = feature[example, dimension]
      stats[node, dimension, bucket, 0] += gradients[example][0]
      stats[node, dimension, bucket, 1] += hessians[example][0]
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


class _Best:
  """The best split of a node seen so far."""

  def __init__(self):
    self.gain = _LOWEST
    self.bucket = self.dimension = 0
    self.split_type = b""
    self.left = self.right = _F32(0)

  def offer(self, left_stats, right_stats, bucket, dimension, split_type,
            l1, l2):
    left, left_gain = weight_and_gain(left_stats[0], left_stats[1], l1, l2)
    right, right_gain = weight_and_gain(right_stats[0], right_stats[1], l1,
                                        l2)
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


def calculate_best_feature_split_v2(
    node_id_range: Sequence[int], stats_summaries: Sequence[np.ndarray],
    split_types: Sequence[bytes], candidate_feature_ids: Sequence[int], l1,
    l2, tree_complexity, min_node_weight) -> List[np.ndarray]:
  """BoostedTreesCalculateBestFeatureSplitV2 for one-dimensional logits.

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
    total = np.cumsum(first, axis=0, dtype=_F32)[-1]
    if abs(total[1]) < _F32(min_node_weight):
      continue
    _, parent_gain = weight_and_gain(total[0], total[1], l1, l2)
    best, best_feature = _Best(), None
    for index, split_type in enumerate(split_types):
      candidate = _Best()
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
        node, gain, best_feature, best.dimension, best.bucket, [best.left],
        [best.right], best.split_type)):
      column.append(value)
  dtypes = (np.int32, _F32, np.int32, np.int32, np.int32, _F32, _F32,
            np.bytes_)
  result = [np.array(column, dtype) for column, dtype in zip(columns, dtypes)]
  for contribs in (5, 6):
    result[contribs] = result[contribs].reshape(-1, 1)
  return result


def _as_bytes(value) -> bytes:
  return value if isinstance(value, bytes) else str(value).encode()
