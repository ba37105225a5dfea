"""The seams between the outer loops (controller.py) and the runners.

A runner runs steps or batches and knows nothing of cadences; the
controller decides when and how many. Both import this module, neither
imports the other: the runner protocols, what a runner call returns
(StepsRun, Advanced), and the hook and checkpoint cadences the controller
asks.
"""

import dataclasses
from typing import (Any, Dict, List, Optional, Protocol, Sequence, Tuple,
                    runtime_checkable)


@dataclasses.dataclass(frozen=True)
class StepsRun:
  """What one runner call observed.

  Attributes:
    steps: how many steps the call accounts for.
    loss: the loss of its last step; None when unknown.
    values: the hooks' fetches, by fetch key.
    ended: the input ended inside the call, after `steps` steps: `loss` is
      the last of those, and `values` is empty (no hook sees them, as no
      after_run followed a TF1 session run that hit the end).
  """
  steps: int
  loss: Optional[float]
  values: Dict[str, Any]
  ended: bool = False


@dataclasses.dataclass(frozen=True)
class Advanced:
  """What a runner's `advance` call did (steps no hook sees).

  Attributes:
    steps: how many steps ran.
    nan_loss: the loss of the last step when it was NaN (the call stopped
      there), else None.
    regular: every step moved global_step by exactly one (else the call
      stopped after the first that did not).
    ended: the input ended inside the call.
    loss: the loss of the last step that ran; None when none ran.
  """
  steps: int
  nan_loss: Optional[float] = None
  regular: bool = True
  ended: bool = False
  loss: Optional[float] = None


class TrainRunner(Protocol):
  """The inner loop: runs steps, knows nothing of cadences."""

  def train(self, *, num_steps: int, steps_left: Optional[int],
            fetches: Sequence[str]) -> Optional[StepsRun]:
    """Runs up to `num_steps` steps (never past `steps_left`, None: no limit).

    Returns:
      What ran and the `fetches`; None when the input ended before any
      step ran (`ended` when it ended after some).
    """

  def global_step(self, counted: int) -> int:
    """The global step after a call, given the controller's count."""

  def settle(self) -> int:
    """Finishes the work in flight; returns the steps it had not reported."""

  def finish(self) -> int:
    """Like settle(), at the end of training (nothing to do when idle)."""


@runtime_checkable
class LossOnDemandRunner(TrainRunner, Protocol):
  """A runner whose calls do not fetch the loss (StepsRun.loss is None)."""

  def latest_loss(self) -> Optional[float]:
    """The loss of the last step to finish; None when unknown."""


@runtime_checkable
class AdvancingRunner(TrainRunner, Protocol):
  """A runner that can also run steps no hook sees (automatic mode)."""

  def advance(self, *, num_steps: int, step: int,
              check_nan: bool) -> Advanced:
    """Runs up to `num_steps` steps from global step `step` in one call.

    Stops after a step with a NaN loss (when `check_nan`), after a step that
    did not move global_step by exactly one, or at the end of the input.
    """


class Cadence(Protocol):
  """The hooks' step cadences (hook_cadence.HookCadence)."""

  checks_nan: bool

  def steps_to_next(self, step: int) -> Optional[int]:
    """Steps up to the next one a hook acts at; None: no limit."""

  def skip(self, steps: int) -> None:
    """Counts steps the hooks did not see (negative: takes them back)."""

  def nan_seen(self, loss_value: Any) -> bool:
    """The NanTensorHooks' after_run on an unseen NaN; True: stop."""


class HookPort(Protocol):
  """The hooks of one train() call, as the controller drives them."""

  @property
  def stop_requested(self) -> bool:
    """Whether a hook asked training to stop."""

  def before_call(self) -> Sequence[str]:
    """Runs before_run; returns the keys the hooks want fetched."""

  def after_call(self, keys: Sequence[str], run: StepsRun, step: int) -> None:
    """Runs after_run with what the call fetched, at global step `step`."""

  def end(self) -> None:
    """Runs the hooks' end()."""


class CheckpointCadence(Protocol):
  """When checkpoints are saved (variable_saver.CheckpointWriter)."""

  def begin(self) -> None:
    """Saves the start step."""

  def due(self, step: int) -> bool:
    """True if after_step(step) would save."""

  def steps_to_next(self, step: int) -> Optional[int]:
    """Steps until the step cadence saves; None: by time or never."""

  def after_step(self, step: int) -> bool:
    """Saves if due; True if a listener asked to stop."""

  def end(self) -> None:
    """Saves the last step if it is not saved yet."""


class BatchRunner(Protocol):
  """Evaluation's and prediction's inner loop: batches that move no step."""

  @property
  def stop_requested(self) -> bool:
    """A hook asked to stop."""

  def one(self) -> Optional[Dict[str, Any]]:
    """One batch with the hooks around it; None: the input ended or a hook
    had asked to stop."""

  def many(self, num_batches: int) -> int:
    """Up to `num_batches` batches no hook sees (evaluation: they update the
    metrics); returns how many ran (fewer: the input ended)."""


class PredictionRunner(BatchRunner, Protocol):
  """A BatchRunner whose unobserved batches return their predictions."""

  def can_batch(self) -> bool:
    """Many batches per call are possible (asked only when wanted)."""

  def many_predictions(self, num_batches: int
                      ) -> Tuple[List[Dict[str, Any]], bool]:
    """Up to `num_batches` batches' predictions no hook sees; and whether
    the input ended."""
