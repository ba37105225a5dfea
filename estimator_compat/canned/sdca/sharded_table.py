"""A mutable dense hash table split into shards by `abs(key) % num_shards`.

SDCA keeps one row of state per example (dual variable, primal and dual
loss, example weight) keyed by the example id's fingerprint. Each shard is
a `tf.lookup.experimental.DenseHashTable` named
`<name>-<i>-of-<num_shards>`; in a TF1 graph each registers itself as a
saveable, so checkpoints hold `<name>-<i>-of-<n>-keys` / `-values`, the
names TensorFlow 2.15's Estimator wrote.
"""

from typing import Any, List, Tuple

import tensorflow as tf


class ShardedMutableDenseHashTable:
  """`num_shards` dense hash tables behind one lookup / insert interface.

  Keys are a vector, or a matrix whose first column picks the shard.
  """

  def __init__(self, key_dtype, value_dtype, default_value, empty_key,
               deleted_key, num_shards: int = 1, checkpoint: bool = True,
               name: str = "ShardedMutableHashTable"):
    self._key_dtype = key_dtype
    self._value_dtype = value_dtype
    with tf.name_scope(name) as scope:
      self._table_name = scope
      self._table_shards = [
          tf.lookup.experimental.DenseHashTable(
              key_dtype=key_dtype, value_dtype=value_dtype,
              default_value=default_value, empty_key=empty_key,
              deleted_key=deleted_key, checkpoint=checkpoint,
              name=f"{name}-{index + 1}-of-{num_shards}")
          for index in range(num_shards)]
    self._value_shape = self._table_shards[0]._value_shape  # pylint: disable=protected-access

  @property
  def name(self) -> str:
    return self._table_name

  @property
  def table_shards(self) -> List[Any]:
    return self._table_shards

  @property
  def _num_shards(self) -> int:
    return len(self._table_shards)

  def size(self, name=None) -> tf.Tensor:
    """The number of keys over all shards."""
    with tf.name_scope(name or "sharded_mutable_hash_table_size"):
      return tf.math.add_n([shard.size() for shard in self._table_shards])

  def _shard_of(self, keys: tf.Tensor) -> tf.Tensor:
    if keys.shape.ndims > 1:
      keys = tf.reshape(keys[:, :1], [-1])
    return tf.cast(tf.math.floormod(tf.math.abs(keys), self._num_shards),
                   tf.int32)

  def _checked_keys(self, keys) -> tf.Tensor:
    keys = tf.convert_to_tensor(keys)
    if keys.dtype.base_dtype != self._key_dtype:
      raise TypeError(f"Signature mismatch. Keys must be dtype "
                      f"{self._key_dtype}, got {keys.dtype}.")
    if keys.shape.ndims not in (1, 2):
      raise ValueError(
          f"Expected a vector or matrix for keys, got {keys.shape}.")
    return keys

  def lookup(self, keys, name=None) -> tf.Tensor:
    """The values of `keys` (the default value for a missing key)."""
    keys = self._checked_keys(keys)
    if self._num_shards == 1:
      return self._table_shards[0].lookup(keys, name=name)
    shards = self._shard_of(keys)
    key_parts = tf.dynamic_partition(keys, shards, self._num_shards)
    positions = tf.dynamic_partition(
        tf.range(tf.shape(keys)[0]), shards, self._num_shards)
    values = [table.lookup(part)
              for table, part in zip(self._table_shards, key_parts)]
    result = tf.dynamic_stitch(positions, values, name=name)
    result.set_shape(keys.shape[:1].concatenate(self._value_shape))
    return result

  def insert(self, keys, values, name=None) -> tf.Operation:
    """Sets the values of `keys` (each key in its shard)."""
    keys = self._checked_keys(keys)
    if self._num_shards == 1:
      return self._table_shards[0].insert(keys, values, name=name)
    shards = self._shard_of(keys)
    key_parts = tf.dynamic_partition(keys, shards, self._num_shards)
    value_parts = tf.dynamic_partition(values, shards, self._num_shards)
    return tf.group(*[table.insert(k, v) for table, k, v in zip(
        self._table_shards, key_parts, value_parts)], name=name)

  def export_sharded(self, name=None) -> Tuple[List[tf.Tensor],
                                               List[tf.Tensor]]:
    """Per shard, all its bucket keys and values (empty buckets included)."""
    del name  # Each shard names its own export.
    exported = [shard.export() for shard in self._table_shards]
    return [keys for keys, _ in exported], [values for _, values in exported]
