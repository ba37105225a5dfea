"""EmbeddingConfigSpec and the TPU embedding parameter classes (training
with them: the tpu_embedding golden)."""

import os

import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.tpu import embedding_parameters as params_lib
from estimator_compat.tpu.embedding_config_spec import EmbeddingConfigSpec


def _tpu_columns():
  item = tf.feature_column.categorical_column_with_identity("item", 5)
  return [tf.compat.v1.tpu.experimental.embedding_column(item, 2)]


def test_spec_keeps_the_columns_and_parameters():
  adagrad = params_lib.AdagradParameters(0.1)
  spec = EmbeddingConfigSpec(feature_columns=_tpu_columns(),
                             optimization_parameters=adagrad)
  assert spec.optimization_parameters is adagrad
  assert len(spec.feature_columns) == 1
  assert spec.tensor_core_feature_columns == []
  assert spec.partition_strategy == "div"


def test_tensor_core_columns_are_set_apart():
  item = tf.feature_column.categorical_column_with_identity("item", 5)
  column = tf.compat.v1.tpu.experimental.embedding_column(
      item, 2, embedding_lookup_device="tpu_tensor_core",
      tensor_core_shape=[None, 1])
  spec = EmbeddingConfigSpec(
      feature_columns=[column],
      optimization_parameters=params_lib.StochasticGradientDescentParameters(
          0.1))
  assert spec.tensor_core_feature_columns == [column]
  assert spec.feature_columns == []


@pytest.mark.parametrize("kwargs,error", [
    ({}, "Exactly one of `feature_columns`"),
    ({"feature_columns": "columns", "partition_strategy": "other"},
     "Invalid partition_strategy other"),
    ({"feature_columns": "columns",
      "optimization_parameters": tf.compat.v1.train.AdagradOptimizer(0.1)},
     "optimization_parameters must be an instance of type"),
])
def test_spec_refuses_bad_arguments(kwargs, error):
  if kwargs.get("feature_columns") == "columns":
    kwargs["feature_columns"] = _tpu_columns()
  with pytest.raises(ValueError, match=error):
    EmbeddingConfigSpec(**kwargs)


def test_spec_refuses_unsupported_columns():
  with pytest.raises(TypeError, match="All feature columns must be supported"):
    EmbeddingConfigSpec(
        feature_columns=[tf.feature_column.categorical_column_with_identity(
            "item", 5)],
        optimization_parameters=params_lib.AdagradParameters(0.1))


def test_install_restores_the_tf1_parameter_classes():
  tfe.install()
  experimental = tf.compat.v1.tpu.experimental
  for name in ("AdagradParameters", "AdamParameters", "FtrlParameters",
               "StochasticGradientDescentParameters"):
    assert getattr(experimental, name) is getattr(params_lib, name)
  assert (tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec is
          EmbeddingConfigSpec)


def test_mod_partitioning_is_refused_before_any_checkpoint(tmp_path):
  spec = EmbeddingConfigSpec(
      feature_columns=_tpu_columns(),
      optimization_parameters=params_lib.AdagradParameters(0.1),
      partition_strategy="mod")
  with pytest.raises(ValueError, match="Mod sharding of embedding tables not "
                     "supported on CPU"):
    tfe.tpu.TPUEstimator(
        model_fn=lambda features, labels, mode, params: None,
        model_dir=str(tmp_path), use_tpu=False, train_batch_size=2,
        embedding_config_spec=spec, config=tfe.tpu.RunConfig())
  assert not os.listdir(tmp_path)


def test_scan_counts_the_restored_parameter_classes_as_supported():
  from estimator_compat.api import api_status_tf1  # pylint: disable=g-import-not-at-top
  count, status = api_status_tf1.tf_status(
      ("compat", "v1", "tpu", "experimental", "FtrlParameters"), False)
  assert (count, status.status) == (5, "supported")
  _, missing = api_status_tf1.tf_status(
      ("compat", "v1", "tpu", "experimental", "RMSPropParameters"), False)
  assert missing.status == "tf-removed"
