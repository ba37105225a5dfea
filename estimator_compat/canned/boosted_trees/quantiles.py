"""The weighted quantile sketch of TF's BoostedTrees kernels, in NumPy.

TF 2.21 registers no kernel for `BoostedTreesMakeQuantileSummaries`,
`BoostedTreesQuantileStreamResourceAddSummaries` or
`BoostedTreesQuantileStreamResourceFlush`; these are what they computed,
in float32 where TF 2.8's kernels used float (values, weights, ranks) and
float64 where they used double (epsilon, error bounds), so the boundaries
match TF 2.8.4's bit for bit (tests/boosted_trees_goldens/kernels).

A summary is a float32 array of rows `(value, weight, min_rank, max_rank)`
sorted by value. A stream buffers entries, compresses full buffers into
summaries and merges them level by level (so its memory stays small);
finalized, it gives the bucket boundaries.
"""

import math
from typing import List, Sequence, Tuple

import numpy as np

_F32 = np.float32
# The quantile accumulator resource's default `max_elements` (1 << 40).
RESOURCE_MAX_ELEMENTS = 1 << 40
_VALUE, _WEIGHT, _MIN_RANK, _MAX_RANK = range(4)


def _empty() -> np.ndarray:
  return np.zeros([0, 4], _F32)


def quantile_specs(epsilon: float, max_elements: int) -> Tuple[int, int]:
  """(levels, block size) of a stream for `epsilon` and `max_elements`:
  the smallest level count whose top level fills at most once."""
  levels, block_size = 1, 2
  if epsilon <= np.finfo(np.float64).eps:
    return 1, max(max_elements, 2)
  while (1 << levels) * block_size < max_elements:
    block_size = int(math.ceil(levels / epsilon)) + 1
    levels += 1
  return levels, max(block_size, 2)


_INSERTION_THRESHOLD = 16


def _sift(keys, items, hole: int, length: int, item, top: int) -> None:
  """Moves the larger child up from `hole` to a leaf, then `item` up from
  there (a binary max-heap in items[:length])."""
  child = hole
  while child < (length - 1) // 2:
    child = 2 * (child + 1)
    if keys[items[child]] < keys[items[child - 1]]:
      child -= 1
    items[hole] = items[child]
    hole = child
  if length % 2 == 0 and child == (length - 2) // 2:
    child = 2 * (child + 1)
    items[hole] = items[child - 1]
    hole = child - 1
  parent = (hole - 1) // 2
  while hole > top and keys[items[parent]] < keys[item]:
    items[hole] = items[parent]
    hole = parent
    parent = (hole - 1) // 2
  items[hole] = item


def _heap_sort(keys, items, first: int, last: int) -> None:
  part = items[first:last]
  length = len(part)
  for parent in range((length - 2) // 2, -1, -1):
    _sift(keys, part, parent, length, part[parent], parent)
  for end in range(length - 1, 0, -1):
    item = part[end]
    part[end] = part[0]
    _sift(keys, part, 0, end, item, 0)
  items[first:last] = part


def _median_to_first(keys, items, result, a, b, c) -> None:
  ka, kb, kc = keys[items[a]], keys[items[b]], keys[items[c]]
  if ka < kb:
    pick = b if kb < kc else (c if ka < kc else a)
  else:
    pick = a if ka < kc else (c if kb < kc else b)
  items[result], items[pick] = items[pick], items[result]


def _partition(keys, items, first: int, last: int, pivot: int) -> int:
  while True:
    while keys[items[first]] < keys[items[pivot]]:
      first += 1
    last -= 1
    while keys[items[pivot]] < keys[items[last]]:
      last -= 1
    if not first < last:
      return first
    items[first], items[last] = items[last], items[first]
    first += 1


def _introsort(keys, items, first: int, last: int, depth: int) -> None:
  while last - first > _INSERTION_THRESHOLD:
    if depth == 0:
      _heap_sort(keys, items, first, last)
      return
    depth -= 1
    _median_to_first(keys, items, first, first + 1,
                     first + (last - first) // 2, last - 1)
    cut = _partition(keys, items, first + 1, last, first)
    _introsort(keys, items, cut, last, depth)
    last = cut


def _insert(keys, items, position: int, lower: int) -> None:
  item = items[position]
  while position > lower and keys[item] < keys[items[position - 1]]:
    items[position] = items[position - 1]
    position -= 1
  items[position] = item


def cpp_sort_order(keys: Sequence) -> List[int]:
  """The order in which GCC's std::sort (an introsort, not stable) leaves
  `keys`: equal keys end up as it left them, which decides in what order
  the buffer's equal values' float weights are summed."""
  items = list(range(len(keys)))
  if len(items) > 1:
    _introsort(keys, items, 0, len(items),
               2 * (len(items).bit_length() - 1))
    for position in range(1, len(items)):
      _insert(keys, items, position, 0)
  return items


def _sorted_entries(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
  """A buffer's entries sorted by value as the kernel sorted them, equal
  values' weights summed in that order; entries of weight <= 0 were never
  kept."""
  order = cpp_sort_order(values.tolist())
  out_values, out_weights = [], []
  for value, weight in zip(values[order], weights[order]):
    if out_values and out_values[-1] == value:
      out_weights[-1] = _F32(out_weights[-1] + weight)
    else:
      out_values.append(value)
      out_weights.append(_F32(weight))
  return np.asarray(out_values, _F32), np.asarray(out_weights, _F32)


def summary_from_entries(values: np.ndarray,
                         weights: np.ndarray) -> np.ndarray:
  """A summary of sorted, distinct values with their weights (exact
  ranks)."""
  summary = np.zeros([len(values), 4], _F32)
  cumulative = _F32(0)
  for row, (value, weight) in enumerate(zip(values, weights)):
    summary[row] = (value, weight, cumulative, _F32(cumulative + weight))
    cumulative = _F32(cumulative + weight)
  return summary


def _prev_max_rank(entry) -> np.float32:
  return _F32(entry[_MAX_RANK] - entry[_WEIGHT])


def _next_min_rank(entry) -> np.float32:
  return _F32(entry[_MIN_RANK] + entry[_WEIGHT])


def merge(base: np.ndarray, other: np.ndarray) -> np.ndarray:
  """Two summaries as one; an error bound no larger than theirs."""
  if not len(other):
    return base
  if not len(base):
    return other.copy()
  rows = []
  i = j = 0
  next_min_1 = next_min_2 = _F32(0)
  while i < len(base) and j < len(other):
    a, b = base[i], other[j]
    if a[_VALUE] < b[_VALUE]:
      rows.append((a[_VALUE], a[_WEIGHT], a[_MIN_RANK] + next_min_2,
                   a[_MAX_RANK] + _prev_max_rank(b)))
      next_min_1 = _next_min_rank(a)
      i += 1
    elif b[_VALUE] < a[_VALUE]:
      rows.append((b[_VALUE], b[_WEIGHT], b[_MIN_RANK] + next_min_1,
                   b[_MAX_RANK] + _prev_max_rank(a)))
      next_min_2 = _next_min_rank(b)
      j += 1
    else:
      rows.append((a[_VALUE], a[_WEIGHT] + b[_WEIGHT],
                   a[_MIN_RANK] + b[_MIN_RANK], a[_MAX_RANK] + b[_MAX_RANK]))
      next_min_1, next_min_2 = _next_min_rank(a), _next_min_rank(b)
      i += 1
      j += 1
  for a in base[i:]:
    rows.append((a[_VALUE], a[_WEIGHT], a[_MIN_RANK] + next_min_2,
                 a[_MAX_RANK] + other[-1, _MAX_RANK]))
  for b in other[j:]:
    rows.append((b[_VALUE], b[_WEIGHT], b[_MIN_RANK] + next_min_1,
                 b[_MAX_RANK] + base[-1, _MAX_RANK]))
  # Each sum above is of two float32 scalars: float32 already.
  return np.asarray(rows, _F32).reshape(-1, 4)


def compress(summary: np.ndarray, size_hint: int,
             min_eps: float = 0.0) -> np.ndarray:
  """About `size_hint` entries (the first and last always kept), the error
  bound growing by at most max(1 / size_hint, min_eps)."""
  size_hint = max(size_hint, 2)
  count = len(summary)
  if count <= size_hint:
    return summary
  eps_delta = float(summary[-1, _MAX_RANK]) * max(1.0 / size_hint, min_eps)
  kept = [summary[0]]
  add_accumulator, add_step = 0, count
  read = last = 0
  while read + 1 != count:
    nxt = read + 1
    while (nxt != count and add_accumulator < add_step
           and float(_F32(_prev_max_rank(summary[nxt])
                          - _next_min_rank(summary[read]))) <= eps_delta):
      add_accumulator += size_hint
      nxt += 1
    read = read + 1 if read == nxt - 1 else nxt - 1
    kept.append(summary[read])
    last = read
    add_accumulator -= add_step
  if last + 1 != count:
    kept.append(summary[-1])
  return np.asarray(kept, _F32)


def approximation_error(summary: np.ndarray) -> float:
  """The largest rank gap, as a fraction of the total weight."""
  if not len(summary):
    return 0.0
  max_gap = _F32(0)
  for previous, entry in zip(summary[:-1], summary[1:]):
    gap = max(_F32(_F32(entry[_MAX_RANK] - entry[_MIN_RANK])
                   - entry[_WEIGHT]),
              _F32(_prev_max_rank(entry) - _next_min_rank(previous)))
    max_gap = max(max_gap, gap)
  return float(max_gap) / float(summary[-1, _MAX_RANK])


def generate_boundaries(summary: np.ndarray,
                        num_boundaries: int) -> np.ndarray:
  """At most `num_boundaries` representative values: a soft compression,
  then (TF 2.8) the inner entries whose removal leaves the smallest rank
  gap dropped one at a time (the first of equal gaps), and consecutive
  duplicates removed as the flush kernel did."""
  if not len(summary):
    return np.zeros([0], _F32)
  compression_eps = float(_F32(approximation_error(summary)
                               + 1.0 / num_boundaries))
  compressed = compress(summary.copy(), num_boundaries, compression_eps)
  kept = list(range(len(compressed)))
  total = summary[-1, _MAX_RANK]
  while len(kept) > num_boundaries:
    smallest, smallest_gap = None, total
    for position in range(1, len(kept) - 1):
      gap = _F32(_prev_max_rank(compressed[kept[position + 1]])
                 - _next_min_rank(compressed[kept[position - 1]]))
      if gap < smallest_gap:
        smallest, smallest_gap = position, gap
    if smallest is None:
      break
    del kept[smallest]
  values = compressed[kept, _VALUE]
  keep = np.concatenate([[True], values[1:] != values[:-1]])
  return values[keep].astype(_F32)


class QuantileStream:
  """One feature's stream: buffered entries and levels of summaries."""

  def __init__(self, epsilon: float, max_elements: int):
    # The kernels hold epsilon as a float and widen it to double here.
    self._eps = float(_F32(epsilon))
    _, self._block_size = quantile_specs(self._eps, max_elements)
    self._buffer_size = min(self._block_size << 1, max_elements)
    self._values: List[float] = []
    self._weights: List[float] = []
    self._levels: List[np.ndarray] = []
    self.final = None

  def push_entry(self, value, weight) -> None:
    """One weighted value (weights <= 0 are ignored)."""
    if weight > 0:
      self._values.append(value)
      self._weights.append(weight)
    if len(self._values) >= self._buffer_size:
      self._push_buffer()

  def _push_buffer(self) -> None:
    values, weights = _sorted_entries(np.asarray(self._values, _F32),
                                      np.asarray(self._weights, _F32))
    self._values, self._weights = [], []
    self._propagate(compress(summary_from_entries(values, weights),
                             self._block_size, self._eps))

  def push_summary(self, summary: np.ndarray) -> None:
    """A summary made elsewhere (MakeQuantileSummaries), compressed in."""
    self._propagate(compress(np.asarray(summary, _F32).reshape(-1, 4),
                             self._block_size, self._eps))

  def _propagate(self, local: np.ndarray) -> None:
    if not len(local):
      return
    level = 0
    while True:
      if len(self._levels) <= level:
        self._levels.append(_empty())
      current = self._levels[level]
      local = merge(local, current)
      if not len(current) or len(local) <= self._block_size + 1:
        self._levels[level] = local
        return
      local = compress(local, self._block_size, self._eps)
      self._levels[level] = _empty()
      level += 1

  def finalize(self) -> np.ndarray:
    """Flushes the buffer and merges every level: the final summary."""
    self._push_buffer()
    final = _empty()
    for summary in self._levels:
      final = merge(final, summary)
    self._levels = []
    self.final = final
    return final


def make_quantile_summaries(values: Sequence[np.ndarray],
                            weights: np.ndarray,
                            epsilon: float) -> List[np.ndarray]:
  """BoostedTreesMakeQuantileSummaries: each feature's batch summary.

  Args:
    values: per float feature, its batch values (flat).
    weights: one weight for all, or one per example.
    epsilon: the sketch's error bound.
  """
  weights = np.asarray(weights, _F32).reshape(-1)
  summaries = []
  for feature in values:
    feature = np.asarray(feature, _F32).reshape(-1)
    stream = QuantileStream(epsilon, len(feature) + 1)
    for index, value in enumerate(feature):
      stream.push_entry(value, weights[index if len(weights) > 1 else 0])
    summaries.append(stream.finalize())
  return summaries


class QuantileStreams:
  """The quantile stream resource: one stream per float feature."""

  def __init__(self, epsilon: float, num_streams: int,
               max_elements: int = RESOURCE_MAX_ELEMENTS):
    self._epsilon = epsilon
    self._max_elements = max_elements
    self._num_streams = num_streams
    self.reset()

  def reset(self) -> None:
    self.streams = [QuantileStream(self._epsilon, self._max_elements)
                    for _ in range(self._num_streams)]

  def add_summaries(self, summaries: Sequence[np.ndarray]) -> None:
    """BoostedTreesQuantileStreamResourceAddSummaries."""
    for stream, summary in zip(self.streams, summaries):
      stream.push_summary(summary)

  def flush(self, num_buckets: int) -> List[np.ndarray]:
    """BoostedTreesQuantileStreamResourceFlush (boundaries, not quantiles):
    each stream's boundaries; the streams start over."""
    boundaries = [generate_boundaries(stream.finalize(), num_buckets)
                  for stream in self.streams]
    self.reset()
    return boundaries
