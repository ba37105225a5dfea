"""`tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec`.

The TPU embedding configuration a TPUEstimator takes. Without a TPU (the
only way estimator_compat runs a TPUEstimator) TF 2.15 checked it and then
trained the embedding columns as ordinary embedding columns with the
model's own optimizer; so does this one. TPU embedding columns
(`tf.compat.v1.tpu.experimental.embedding_column` and
`shared_embedding_columns`) look up their tables on the CPU there.
"""

import collections
from typing import Any, Callable, Dict, Optional, Sequence

from tensorflow.python.feature_column import feature_column as fc_v1
from tensorflow.python.feature_column import feature_column_v2 as fc_v2
from tensorflow.python.tpu import feature_column as tpu_fc
from tensorflow.python.tpu import feature_column_v2 as tpu_fc_v2

from estimator_compat.tpu import embedding_parameters

_TPU_EMBEDDING_COLUMNS = (tpu_fc._TPUEmbeddingColumn,  # pylint: disable=protected-access
                          tpu_fc._TPUSharedEmbeddingColumn,  # pylint: disable=protected-access
                          tpu_fc_v2._TPUEmbeddingColumnV2,  # pylint: disable=protected-access
                          tpu_fc_v2._TPUSharedEmbeddingColumnV2)  # pylint: disable=protected-access
_DEVICE_SPECIFIC_COLUMNS = (
    tpu_fc_v2._TPUDeviceSpecificEmbeddingColumnV2,  # pylint: disable=protected-access
    tpu_fc_v2._TPUSharedDeviceSpecificEmbeddingColumnV2)  # pylint: disable=protected-access
_EMBEDDING_COLUMNS = (fc_v1._EmbeddingColumn, fc_v2.EmbeddingColumn,  # pylint: disable=protected-access
                      fc_v1._SharedEmbeddingColumn)  # pylint: disable=protected-access
_NUMERIC_COLUMNS = (fc_v1._NumericColumn, fc_v2.NumericColumn)  # pylint: disable=protected-access
SUPPORTED_COLUMNS = _NUMERIC_COLUMNS + _TPU_EMBEDDING_COLUMNS + (
    _EMBEDDING_COLUMNS)


def _on_tensor_core(column: Any) -> bool:
  return (isinstance(column, _DEVICE_SPECIFIC_COLUMNS) and
          column._embedding_lookup_device ==  # pylint: disable=protected-access
          tpu_fc_v2.EmbeddingDevice.TPU_TENSOR_CORE)


def _check_config_dicts(feature_to_config_dict: Dict[str, Any],
                        table_to_config_dict: Dict[str, Any]) -> None:
  """Each feature's config names a table of `table_to_config_dict`."""
  for feature, config in feature_to_config_dict.items():
    table = getattr(config, "table_id", None)
    if table is None:
      raise TypeError(
          f"Config for feature {feature} must be of type `FeatureConfig`. "
          f"Got {type(config)}. Fix: give a FeatureConfig (with a table_id).")
    if table not in table_to_config_dict:
      raise ValueError(
          f"Feature {feature} refers to table {table} which is not in the "
          "table_to_config_dict. Fix: add that table.")


class EmbeddingConfigSpec(collections.namedtuple("EmbeddingConfigSpec", [
    "feature_columns", "tensor_core_feature_columns",
    "optimization_parameters", "clipping_limit",
    "pipeline_execution_with_tensor_core",
    "experimental_gradient_multiplier_fn", "feature_to_config_dict",
    "table_to_config_dict", "partition_strategy", "profile_data_directory"])):
  """How a TPUEstimator's embedding tables are configured and trained.

  Give `feature_columns` (TPU embedding columns, embedding columns or
  numeric columns) with `optimization_parameters` (an `AdagradParameters`,
  `AdamParameters`, `FtrlParameters` or
  `StochasticGradientDescentParameters`), or the pair
  `feature_to_config_dict` / `table_to_config_dict`. Device-specific
  columns looked up on the TensorCore go to `tensor_core_feature_columns`.
  """

  def __new__(cls, feature_columns: Optional[Sequence[Any]] = None,
              optimization_parameters: Any = None,
              clipping_limit: Optional[float] = None,
              pipeline_execution_with_tensor_core: bool = False,
              experimental_gradient_multiplier_fn: Optional[Callable] = None,
              feature_to_config_dict: Optional[Dict[str, Any]] = None,
              table_to_config_dict: Optional[Dict[str, Any]] = None,
              partition_strategy: str = "div",
              profile_data_directory: Optional[str] = None
              ) -> "EmbeddingConfigSpec":
    """Checks and builds the spec.

    Raises:
      ValueError: not exactly one of `feature_columns` and the two dicts, an
        unknown partition_strategy, optimization parameters of another
        type, or a feature whose table is missing.
      TypeError: a column of an unsupported type, or a feature config
        without a table.
    """
    dicts = bool(feature_to_config_dict and table_to_config_dict)
    if (not feature_columns and not dicts) or (feature_columns and dicts):
      raise ValueError(
          "Exactly one of `feature_columns` and the pair "
          "`feature_to_config_dict` and `table_to_config_dict` must be be "
          "specified. Fix: give the embedding feature columns, or both "
          "dicts.")
    if partition_strategy not in ("div", "mod"):
      raise ValueError(
          f'Invalid partition_strategy {partition_strategy}. Must be one of '
          '"mod" or "div".')
    tensor_core_columns = None
    embedding_core_columns = None
    if feature_columns:
      tensor_core_columns = []
      embedding_core_columns = []
      for column in feature_columns:
        if _on_tensor_core(column):
          tensor_core_columns.append(column)
        else:
          embedding_core_columns.append(column)
        if not isinstance(column, SUPPORTED_COLUMNS):
          raise TypeError(
              "All feature columns must be supported types in "
              f"{SUPPORTED_COLUMNS}. Got {type(column)}. Fix: build them with "
              "tf.compat.v1.tpu.experimental.embedding_column / "
              "shared_embedding_columns, or embedding / numeric columns.")
      if not isinstance(optimization_parameters,
                        embedding_parameters.SUPPORTED):
        raise ValueError(
            "optimization_parameters must be an instance of type "
            f"{embedding_parameters.SUPPORTED}. Got "
            f"{type(optimization_parameters)}. Fix: pass e.g. "
            "tf.compat.v1.tpu.experimental.AdagradParameters(0.1).")
    else:
      _check_config_dicts(feature_to_config_dict, table_to_config_dict)
    return super().__new__(
        cls, feature_columns=embedding_core_columns,
        tensor_core_feature_columns=tensor_core_columns,
        optimization_parameters=optimization_parameters,
        clipping_limit=clipping_limit,
        pipeline_execution_with_tensor_core=(
            pipeline_execution_with_tensor_core),
        experimental_gradient_multiplier_fn=(
            experimental_gradient_multiplier_fn),
        feature_to_config_dict=feature_to_config_dict,
        table_to_config_dict=table_to_config_dict,
        partition_strategy=partition_strategy,
        profile_data_directory=profile_data_directory)
