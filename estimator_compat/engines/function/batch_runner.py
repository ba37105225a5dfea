"""Evaluation's and prediction's batches on the traced model.

The controller (engines/controller.py: EvaluationController,
PredictionController) decides how many batches each call runs; this runner
runs them: one batch with the hooks' fetches around it, or many that no
hook sees in one call of the traced loop.
"""

from typing import Any, Dict, List, Optional, Tuple

import tensorflow as tf

from estimator_compat.engines.function.fetch_keys import is_variable
from estimator_compat.engines.function.session import HookRunner, to_numpy
from estimator_compat.engines.function.traced_model import TracedModel


class TracedBatches:
  """A BatchRunner / PredictionRunner over a TracedModel and its hooks."""

  def __init__(self, model: TracedModel, hooks: HookRunner):
    self._model = model
    self._hooks = hooks

  @property
  def stop_requested(self) -> bool:
    return self._hooks.stop_requested

  def one(self) -> Optional[Dict[str, Any]]:
    """One batch with the hooks' before_run/after_run around it."""
    hooks, model = self._hooks, self._model
    if hooks.stop_requested:
      return None
    keys = hooks.before_run(model.graph, {})
    try:
      outputs = model.step(keys, 1)
    except tf.errors.OutOfRangeError:
      return None
    values = {key: to_numpy(value) for key, value in outputs.items()}
    for key in keys:
      if is_variable(key):
        values[key] = hooks.variables[key].numpy()
    hooks.after_run(values)
    return values

  def many(self, num_batches: int) -> int:
    return self._model.repeat(num_batches)

  def can_batch(self) -> bool:
    return self._model.can_batch_predictions

  def many_predictions(self, num_batches: int
                      ) -> Tuple[List[Dict[str, Any]], bool]:
    return self._model.predict_batches(num_batches)
