"""The Engine protocol: what the front (and dispatch) call, one entry per mode.

An engine runs one call of a mode for the Estimator front. Every entry takes
keyword arguments only, so that no caller depends on an argument order (the
modes used to take `hooks` and `steps` in opposite orders). The engines are
modules (`engines.graph`, `engines.function.loops`) and `engines.dispatch`,
which picks one of them per call; each satisfies this protocol.
"""

from typing import Any, Callable, Dict, Iterator, Optional, Protocol, Sequence

from estimator_compat.front.model_fn_call import ModelSetup


class Engine(Protocol):
  """One train / evaluate / predict call of a legacy model_fn."""

  def train(self, *, setup: ModelSetup, input_fn: Callable[..., Any],
            hooks: Sequence[Any], steps: Optional[int],
            max_steps: Optional[int],
            saving_listeners: Sequence[Any]) -> Optional[float]:
    """Trains until steps/max_steps, a stop request or the end of input.

    Returns:
      The loss of the last step (None when no step ran).
    """

  def evaluate(self, *, setup: ModelSetup, input_fn: Callable[..., Any],
               hooks: Sequence[Any], steps: Optional[int],
               checkpoint_path: Optional[str]) -> Dict[str, Any]:
    """Evaluates a checkpoint; returns metrics, `loss` and `global_step`."""

  def predict(self, *, setup: ModelSetup, input_fn: Callable[..., Any],
              hooks: Sequence[Any], predict_keys: Optional[Sequence[str]],
              checkpoint_path: str,
              yield_single_examples: bool) -> Iterator[Any]:
    """Yields the predictions of a checkpoint, per example or per batch."""
