"""model_fn_to_keras: a legacy model_fn as a tf-keras Model for `fit`.

The Model wraps a ModelFnModule: `fit` runs the model_fn's own train_op
(its v1 optimizer; the optimizer given to `compile`, if any, is not used),
`evaluate` its eval_metric_ops and mean loss (v1 metrics accumulate over the
evaluation, as under Estimator.evaluate), `predict` and `model(features)` its
predictions. Data are what input_fn_to_dataset_fn gives: (features, labels)
batches, or features alone for predict.
"""

from typing import Any, Dict, Optional

import tensorflow as tf

from estimator_compat.adapters.model_fn_module import ModelFnModule
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.run_config import RunConfig


def _split(data: Any):
  """(features, labels) of a Keras batch (x, y[, sample_weight]) or x."""
  if isinstance(data, tuple):
    if len(data) == 3 and data[2] is not None:
      raise ValueError(
          "A model_fn takes no sample weights (the Estimator had none). Fix: "
          "put the weights in the features and use them in model_fn.")
    return data[0], (data[1] if len(data) > 1 else None)
  return data, None


class ModelFnKerasModel(tf.keras.Model):
  """A tf-keras Model whose steps are a legacy model_fn's (see module doc).

  Args:
    module: the ModelFnModule to run; `model.module` gives it back (its
      legacy variables and checkpoints).
  """

  def __init__(self, module: ModelFnModule, **kwargs):
    super().__init__(**kwargs)
    self.module = module

  def call(self, inputs, training=None):
    mode = ModeKeys.TRAIN if training else ModeKeys.PREDICT
    return self.module(inputs, mode=mode)["predictions"]

  def train_step(self, data) -> Dict[str, Any]:
    features, labels = _split(data)
    return {"loss": self.module.train_step(features, labels)}

  def test_step(self, data) -> Dict[str, Any]:
    features, labels = _split(data)
    return dict(self.module(features, labels, mode=ModeKeys.EVAL)["metrics"])

  def predict_step(self, data):
    features, _ = _split(data)
    return self.module(features, mode=ModeKeys.PREDICT)["predictions"]

  def reset_metrics(self):
    super().reset_metrics()
    self.module.reset_metrics()


def model_fn_to_keras(model_fn, params: Optional[Dict[str, Any]] = None,
                      config: Optional[RunConfig] = None) -> ModelFnKerasModel:
  """A compiled tf-keras Model running `model_fn` (see the module doc).

  Args:
    model_fn: the legacy model_fn.
    params: the Estimator's params.
    config: a RunConfig (tf_random_seed seeds the initial values).

  Returns:
    A ModelFnKerasModel, compiled (call `compile` again for options such as
    steps_per_execution). Build it under `strategy.scope()` to train it
    under a strategy.
  """
  model = ModelFnKerasModel(ModelFnModule(model_fn, params=params,
                                          config=config))
  model.compile()
  return model
