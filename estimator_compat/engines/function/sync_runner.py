"""The inner training loop on one device, Mirrored or MultiWorkerMirrored.

`SyncRunner.train(num_steps=N)` runs N steps of the traced model in one call
and returns the last step's loss and the hooks' fetches; the controller
(engines/controller.py) decides N and everything around the call.
`SyncHooks` drives the call's SessionRunHooks for the controller.
"""

from typing import Any, Dict, Optional, Sequence

import tensorflow as tf

from estimator_compat.engines.runner import Advanced, StepsRun
from estimator_compat.engines.function.fetch_keys import is_variable
from estimator_compat.engines.function.session import HookRunner, to_numpy
from estimator_compat.engines.function.traced_model import LOSS, TracedModel


class SyncRunner:
  """Runs steps of a TracedModel in this process (all replicas in step)."""

  def __init__(self, model: TracedModel, hook_variables: Dict[str, Any],
               global_step: tf.Variable):
    """Creates the runner.

    Args:
      model: the traced train step.
      hook_variables: variables hooks fetch by `var:` key (HookRunner's).
      global_step: the model's global step.
    """
    self._model = model
    self._hook_variables = hook_variables
    self._global_step = global_step

  def train(self, *, num_steps: int, steps_left: Optional[int],
            fetches: Sequence[str]) -> Optional[StepsRun]:
    """Runs `num_steps` steps in one call; None if the input had ended."""
    del steps_left  # num_steps is already within it: nothing runs ahead.
    # A variable a hook fetches is read before the step, as a TF1 session
    # read it (the read has no dependency on the train_op and runs first).
    read_before = {key: self._hook_variables[key].numpy()
                   for key in fetches if is_variable(key)}
    try:
      outputs = self._model.step(fetches, num_steps)
    except tf.errors.OutOfRangeError:
      if num_steps == 1:
        return None
      ran, loss = self._model.steps_before_end()
      if not ran:
        return None
      return StepsRun(steps=ran, loss=loss, values={}, ended=True)
    values = {key: to_numpy(value) for key, value in outputs.items()}
    values.update(read_before)
    return StepsRun(steps=num_steps, loss=values.get(LOSS), values=values)

  def advance(self, *, num_steps: int, step: int,
              check_nan: bool) -> Advanced:
    """Runs up to `num_steps` steps no hook sees, in one call."""
    try:
      ran, nan, loss, regular = self._model.advance(num_steps, step,
                                                    check_nan)
    except tf.errors.OutOfRangeError:
      # Every step before the end moved global_step by one.
      ran = int(self._global_step.value().numpy()) - step
      return Advanced(steps=ran, ended=True,
                      loss=self._model.steps_before_end()[1])
    return Advanced(steps=ran, nan_loss=loss if nan else None,
                    regular=regular, loss=loss if ran else None)

  def global_step(self, counted: int) -> int:
    """The step as the variable holds it (read once per call, ~0.3 ms)."""
    del counted
    return int(self._global_step.value().numpy())

  def settle(self) -> int:
    return 0  # Nothing runs ahead of the controller.

  def finish(self) -> int:
    return 0


class SyncHooks:
  """A HookRunner as the controller's hook port."""

  def __init__(self, runner: HookRunner, graph: tf.Graph):
    self._runner = runner
    self._graph = graph

  @property
  def stop_requested(self) -> bool:
    return self._runner.stop_requested

  def before_call(self) -> Sequence[str]:
    return self._runner.before_run(self._graph, {})

  def after_call(self, keys: Sequence[str], run: StepsRun, step: int) -> None:
    del keys, step  # The values hold every key, the step included.
    self._runner.after_run(run.values)

  def end(self) -> None:
    self._runner.end()
