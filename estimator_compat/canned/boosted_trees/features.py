"""Feature columns as the BoostedTrees estimators see them.

Each column, sorted by name, becomes one or more integer "features" (rank 2,
`[batch, 1]`, the bucket id of an example) that the tree kernels split on:

- a bucketized column: one feature, its bucket index;
- an indicator column: one 0/1 feature per category;
- a categorical column: one feature, the category id (equality splits);
- any other dense float column (a numeric column): one feature per
  dimension, bucketized by the quantile boundaries the estimator learns
  before its first tree (`1 / quantile_sketch_epsilon` buckets).

Feature ids number these features in that order; features that share a
bucket count share one stats summary (a "bucket group").
"""

import collections
from typing import Dict, List, Sequence, Tuple

import tensorflow as tf
from tensorflow.python.feature_column import feature_column as fc_v1
from tensorflow.python.feature_column import feature_column_lib
from tensorflow.python.feature_column import feature_column_v2 as fc_v2

INDICATOR, BUCKETIZED, DENSE, CATEGORICAL = ("indicator", "bucketized",
                                             "dense", "categorical")
EQUALITY_SPLIT, INEQUALITY_SPLIT = "equality", "inequality"


def kind(column) -> str:
  """How the trees read `column`: INDICATOR, BUCKETIZED, DENSE, CATEGORICAL.

  Raises:
    ValueError: a column that is none of these.
  """
  # pylint: disable=protected-access
  if isinstance(column, (fc_v2.IndicatorColumn, fc_v1._IndicatorColumn)):
    return INDICATOR
  if isinstance(column, (fc_v2.BucketizedColumn, fc_v1._BucketizedColumn)):
    return BUCKETIZED
  if isinstance(column, (fc_v2.DenseColumn, fc_v1._DenseColumn)):
    return DENSE
  if isinstance(column, (fc_v2.CategoricalColumn, fc_v1._CategoricalColumn)):
    return CATEGORICAL
  # pylint: enable=protected-access
  raise ValueError(
      f"Got unexpected feature column type: {column}. Fix: pass numeric, "
      "bucketized, indicator or categorical feature columns.")


def is_float_column(column) -> bool:
  """True for the columns bucketized by learned quantiles."""
  # pylint: disable=protected-access
  if kind(column) != DENSE:
    return False
  if isinstance(column, (fc_v2.NumericColumn, fc_v1._NumericColumn)):
    return True
  # pylint: enable=protected-access
  return column.dtype.is_floating


def sorted_columns(feature_columns) -> List:
  return sorted(feature_columns, key=lambda column: column.name)


def _variable_shape(column) -> tf.TensorShape:
  if feature_column_lib.is_feature_column_v2([column]):
    return column.variable_shape
  return column._variable_shape  # pylint: disable=protected-access


def dense_width(column) -> int:
  """The number of features a dense column gives (its first dimension)."""
  shape = _variable_shape(column)
  return shape[0] if shape.as_list() else 1


def _num_categories(column) -> int:
  categorical = column.categorical_column
  if hasattr(categorical, "num_buckets"):
    return categorical.num_buckets
  return categorical._num_buckets  # pylint: disable=protected-access


def width(column) -> int:
  """The number of features `column` gives."""
  column_kind = kind(column)
  if column_kind == INDICATOR:
    return _num_categories(column)
  if column_kind == DENSE:
    return dense_width(column)
  return 1


def num_features(columns) -> int:
  return sum(width(column) for column in columns)


def feature_names(columns) -> List[str]:
  """The column name of each feature id (an indicator's categorical
  column's name for each of its categories)."""
  names = []
  for column in columns:
    name = (column.categorical_column.name if kind(column) == INDICATOR
            else column.name)
    names.extend([name] * width(column))
  return names


def bucket_groups(columns, num_quantiles: int
                  ) -> Tuple[List[int], List[Tuple[int, ...]],
                             List[Tuple[str, ...]]]:
  """Groups the feature ids of sorted `columns` by bucket count.

  Indicator features have 2 buckets; bucketized ones all share the largest
  boundary count + 1 (at least 2); float ones `num_quantiles`; categorical
  ones their `num_buckets` and split by equality. Groups come in the order
  their bucket count first appears, the bucketized group's place being
  the first.

  Returns:
    (bucket sizes, feature ids per group, split types per group).
  """
  pending = object()  # the bucketized group, until its size is known
  groups = collections.OrderedDict([(pending, [])])
  bucketized_size = 2
  feature_id = 0
  for column in columns:
    column_kind = kind(column)
    if column_kind == INDICATOR:
      for _ in range(_num_categories(column)):
        groups.setdefault(2, []).append((feature_id, INEQUALITY_SPLIT))
        feature_id += 1
    elif column_kind == BUCKETIZED:
      bucketized_size = max(bucketized_size, len(column.boundaries) + 1)
      groups[pending].append((feature_id, INEQUALITY_SPLIT))
      feature_id += 1
    elif column_kind == DENSE:
      for _ in range(dense_width(column)):
        groups.setdefault(num_quantiles, []).append(
            (feature_id, INEQUALITY_SPLIT))
        feature_id += 1
    else:
      groups.setdefault(column.num_buckets, []).append(
          (feature_id, EQUALITY_SPLIT))
      feature_id += 1
  bucketized = groups.pop(pending)
  if bucketized_size in groups:
    groups[bucketized_size].extend(bucketized)
  elif bucketized:
    groups[bucketized_size] = bucketized
  sizes, ids, splits = [], [], []
  for size, entries in groups.items():
    sizes.append(size)
    group_ids, group_splits = zip(*entries)
    ids.append(group_ids)
    splits.append(group_splits)
  return sizes, ids, splits


def float_boundaries(float_columns, boundaries: Sequence[tf.Tensor]
                     ) -> Dict[str, List[tf.Tensor]]:
  """The quantile boundaries of each float column's dimensions, by name."""
  result, start = {}, 0
  for column in float_columns:
    count = dense_width(column)
    result[column.name] = list(boundaries[start:start + count])
    start += count
  return result


def bucketize(values: Sequence[tf.Tensor],
              boundaries: Sequence[tf.Tensor]) -> List[tf.Tensor]:
  """Each value's bucket, as TF's BoostedTreesBucketize kernel gave it: the
  index of the first boundary >= the value, the last bucket for values past
  every boundary, 0 without boundaries."""
  buckets = []
  for value, bounds in zip(values, boundaries):
    count = tf.size(bounds)
    index = tf.searchsorted(bounds, tf.reshape(value, [-1]), side="left",
                            out_type=tf.int32)
    index = tf.minimum(index, tf.maximum(count - 1, 0))
    buckets.append(tf.reshape(tf.where(count > 0, index, 0),
                              tf.shape(value)))
  return buckets


def _transform(features, columns) -> Dict:
  # pylint: disable=protected-access
  v2_columns = [c for c in columns
                if feature_column_lib.is_feature_column_v2([c])]
  v1_columns = [c for c in columns if c not in v2_columns]
  transformed = {}
  if v2_columns:
    state_manager = fc_v2._StateManagerImpl(layer=None, trainable=False)
    transformed = fc_v2._transform_features_v2(features, v2_columns,
                                               state_manager)
  if v1_columns:
    transformed.update(fc_v1._transform_features(features, v1_columns))
  # pylint: enable=protected-access
  return transformed


def _columns(tensor: tf.Tensor) -> List[tf.Tensor]:
  return [tf.expand_dims(t, axis=1) for t in tf.unstack(tensor, axis=1)]


def transform(features, columns, boundaries=None) -> List[tf.Tensor]:
  """The `[batch, 1]` features of sorted `columns`, in feature-id order.

  Args:
    features: the input_fn's feature dict.
    columns: feature columns, sorted by name.
    boundaries: float column name -> its dimensions' quantile boundaries;
      empty or None: float columns give their raw values (quantile
      accumulation reads them so).

  Raises:
    ValueError: a feature of rank over 2.
  """
  transformed = _transform(features, columns)
  result = []
  for column in columns:
    column_kind = kind(column)
    tensor = transformed[column]
    if column_kind == BUCKETIZED:
      if len(tensor.shape) > 2:
        raise ValueError(
            "For now, only supports features equivalent to rank 2 but column "
            f"`{column.source_column.name}` got: "
            f"{features[column.source_column.name].shape}. Fix: give the "
            "bucketized column a 1-dimensional numeric source.")
      result.append(tensor)
    elif column_kind == INDICATOR:
      tensor = tf.cast(tensor, tf.int32)
      if len(tensor.shape) > 2:
        name = column.categorical_column.name
        raise ValueError(
            "Rank of indicator column must be no more than 2, but column "
            f"`{name}` got: {features[name].shape}. Fix: feed one value per "
            "example.")
      result.extend(_columns(tensor))
    elif column_kind == DENSE:
      if _variable_shape(column).rank > 1:
        raise ValueError(
            "For now, we only support Dense column with rank of 1, but column "
            f"`{column.name}` got: {_variable_shape(column)}. Fix: use a "
            "numeric column of shape (n,).")
      if not boundaries:
        result.extend(_columns(tensor))
      else:
        bucketized = bucketize(tf.unstack(tensor, axis=1),
                               boundaries[column.name])
        result.extend(tf.expand_dims(t, axis=1) for t in bucketized)
    else:
      result.append(tf.cast(tf.sparse.to_dense(tensor), tf.int32))
  return result
