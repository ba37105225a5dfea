"""`tf.compat.v1.estimator.tpu`: TPUEstimator programs on CPU/GPU.

`TPUEstimator(use_tpu=False)` runs as the real one did without a TPU; see
`tpu_estimator` for what it does and `tpu_config` for the configuration;
`experimental.EmbeddingConfigSpec` configures TPU embedding columns, which
train on the CPU as ordinary embedding columns.
"""

from estimator_compat.tpu import experimental
from estimator_compat.tpu.tpu_config import (InputPipelineConfig, RunConfig,
                                             TPUConfig)
from estimator_compat.tpu.tpu_estimator import TPUEstimator
from estimator_compat.tpu.tpu_estimator_spec import TPUEstimatorSpec

__all__ = ["InputPipelineConfig", "RunConfig", "TPUConfig", "TPUEstimator",
           "TPUEstimatorSpec", "experimental"]
