"""`tf.compat.v1.estimator.tpu.experimental`: `EmbeddingConfigSpec`."""

from estimator_compat.tpu.embedding_config_spec import EmbeddingConfigSpec

__all__ = ["EmbeddingConfigSpec"]
