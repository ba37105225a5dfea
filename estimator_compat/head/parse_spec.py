"""`classifier_parse_example_spec` / `regressor_parse_example_spec`.

TF 2.15 had two versions of each: `tf.estimator.*` builds the feature spec
with `tf.feature_column.make_parse_example_spec` (v2 feature columns),
`tf.compat.v1.estimator.*` with `tf.compat.v1.feature_column`'s (which
also takes v1 `_FeatureColumn`s). Both then add the label's
`FixedLenFeature` and the weight column's spec.
"""

from typing import Any, Dict, Iterable, Optional, Union

import tensorflow as tf


def _add_label_and_weight(spec: Dict[str, Any], label_key: str,
                          label_spec: tf.io.FixedLenFeature,
                          weight_column: Union[None, str, Any]
                          ) -> Dict[str, Any]:
  if label_key in spec:
    raise ValueError(
        "label should not be used as feature. label_key: "
        f"{label_key}, features: {spec.keys()}. Fix: remove the label from "
        "feature_columns.")
  spec[label_key] = label_spec
  if weight_column is None:
    return spec
  if isinstance(weight_column, str):
    weight_column = tf.feature_column.numeric_column(weight_column)
  if not isinstance(weight_column,
                    type(tf.feature_column.numeric_column("_"))):
    raise ValueError(
        "weight_column should be an instance of "
        f"tf.feature_column.numeric_column. Given type: {type(weight_column)} "
        f"value: {weight_column}. Fix: pass the weight feature's name or a "
        "numeric_column.")
  if weight_column.key in spec:
    raise ValueError(
        "weight_column should not be used as feature. weight_column: "
        f"{weight_column.key}, features: {spec.keys()}. Fix: remove the "
        "weight from feature_columns.")
  spec.update(weight_column.parse_example_spec)
  return spec


def classifier_parse_example_spec(feature_columns: Iterable[Any],
                                  label_key: str, label_dtype=tf.int64,
                                  label_default: Optional[Any] = None,
                                  weight_column=None) -> Dict[str, Any]:
  """Parsing spec of the features, a [1] label and the weight (v2)."""
  spec = tf.feature_column.make_parse_example_spec(feature_columns)
  return _add_label_and_weight(
      spec, label_key, tf.io.FixedLenFeature((1,), label_dtype, label_default),
      weight_column)


def regressor_parse_example_spec(feature_columns: Iterable[Any],
                                 label_key: str, label_dtype=tf.float32,
                                 label_default: Optional[Any] = None,
                                 label_dimension: int = 1,
                                 weight_column=None) -> Dict[str, Any]:
  """Parsing spec of the features, a [label_dimension] label and the weight
  (v2)."""
  spec = tf.feature_column.make_parse_example_spec(feature_columns)
  return _add_label_and_weight(
      spec, label_key,
      tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default),
      weight_column)


def classifier_parse_example_spec_v1(feature_columns: Iterable[Any],
                                     label_key: str, label_dtype=tf.int64,
                                     label_default: Optional[Any] = None,
                                     weight_column=None) -> Dict[str, Any]:
  """`tf.compat.v1.estimator.classifier_parse_example_spec`."""
  spec = tf.compat.v1.feature_column.make_parse_example_spec(feature_columns)
  return _add_label_and_weight(
      spec, label_key, tf.io.FixedLenFeature((1,), label_dtype, label_default),
      weight_column)


def regressor_parse_example_spec_v1(feature_columns: Iterable[Any],
                                    label_key: str, label_dtype=tf.float32,
                                    label_default: Optional[Any] = None,
                                    label_dimension: int = 1,
                                    weight_column=None) -> Dict[str, Any]:
  """`tf.compat.v1.estimator.regressor_parse_example_spec`."""
  spec = tf.compat.v1.feature_column.make_parse_example_spec(feature_columns)
  return _add_label_and_weight(
      spec, label_key,
      tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default),
      weight_column)
