"""Adapters: a legacy model_fn and input_fn as TF2 building blocks.

- `input_fn_to_dataset_fn(input_fn, mode)`: a `dataset_fn(input_context)`
  for `strategy.distribute_datasets_from_function`,
  `ClusterCoordinator.create_per_worker_dataset` or `model.fit`.
- `ModelFnModule(model_fn, params)`: a tf.Module holding the model_fn's
  variables under their legacy names; `module(features, mode=...)`,
  `module.train_step(features, labels)`, `module.loss_fn(features, labels)`,
  legacy checkpoints in and out.
- `model_fn_to_keras(model_fn, params)`: the same module as a tf-keras Model
  for `fit`, `evaluate` and `predict`.
"""

from estimator_compat.adapters.input_fns import input_fn_to_dataset_fn
from estimator_compat.adapters.keras_model import (ModelFnKerasModel,
                                                   model_fn_to_keras)
from estimator_compat.adapters.model_fn_module import ModelFnModule

__all__ = ["input_fn_to_dataset_fn", "ModelFnKerasModel", "ModelFnModule",
           "model_fn_to_keras"]
