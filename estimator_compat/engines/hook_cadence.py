"""When the hooks of a train() call must see a step (automatic steps per call).

With `RunConfig(steps_per_loop=None)` the controller runs, per call, every
step up to the next one at which a hook would do something. This module holds
that knowledge, for the hooks whose per-step behaviour is known exactly
(TensorFlow's own classes, or subclasses that override none of the methods
that run at every step):

- `LoggingTensorHook` (every_n_iter: counted in its own after_run calls),
  `StepCounterHook`, `SummarySaverHook`, `StopAtStepHook`: step cadences read
  from the hook's own timer and counters;
- `NanTensorHook` on the model's loss: no cadence, the runner checks the loss
  of every step inside the call and stops at the first NaN;
- `GlobalStepWaiterHook`: only until it has started;
- a hook that overrides neither `before_run` nor `after_run`: no cadence.

Any other hook makes every call one step, as before. Time-based cadences
(`every_n_secs`, `save_secs`) are checked at call boundaries
(docs/decisions.md).

Steps a hook does not see still count for it: `skip(k)` moves its counters
as k unobserved after_run calls would have (the values those calls would
have used are the ones predicted from a step that advances global_step by
exactly one, which the runner checks inside the call).
"""

from typing import Any, List, Optional, Sequence, Tuple

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.training import basic_session_run_hooks

_train = tf.compat.v1.train
_BASE = _train.SessionRunHook


def _timer_steps_to(timer: Any, position: int) -> Optional[int]:
  """Steps until a SecondOrStepTimer triggers, `position` being the next.

  Returns:
    1 when it has not triggered yet (it triggers at the first step), the
    steps until its step cadence, or None when it triggers by time only.
  """
  if isinstance(timer, basic_session_run_hooks.NeverTriggerTimer):
    return None
  last = timer.last_triggered_step()
  if last is None:
    return 1
  every = getattr(timer, "_every_steps", None)
  if every is None:
    return None
  return max(1, last + every - position + 1)


class _Known:
  """How one hook class behaves at each step.

  Attributes:
    base: the TensorFlow class.
    methods: the methods that run at every step; a subclass overriding one
      of them is unknown.
    state: attributes the methods below read.
  """
  base: type = _BASE
  methods: Tuple[str, ...] = ("before_run", "after_run")
  state: Tuple[str, ...] = ()

  def steps_to_next(self, hook: Any, step: int) -> Optional[int]:
    """Steps until the hook acts, the next step being 1; None: never."""
    del hook, step
    return None

  def skip(self, hook: Any, steps: int) -> None:
    """Moves the hook's counters by `steps` unobserved steps (may be < 0)."""
    del hook, steps


class _LoggingTensor(_Known):
  base = _train.LoggingTensorHook
  methods = ("before_run", "after_run", "_log_tensors")
  state = ("_timer", "_iter_count")

  def steps_to_next(self, hook, step):
    del step
    return _timer_steps_to(hook._timer, hook._iter_count)  # pylint: disable=protected-access

  def skip(self, hook, steps):
    hook._iter_count += steps  # pylint: disable=protected-access


class _StepCounter(_Known):
  base = _train.StepCounterHook
  methods = ("before_run", "after_run", "_log_and_record")
  state = ("_timer", "_last_global_step", "_steps_per_run")

  def steps_to_next(self, hook, step):
    # It asks its timer about (stale step + steps_per_run), stale = `step`.
    return _timer_steps_to(hook._timer, step + 1)  # pylint: disable=protected-access

  def skip(self, hook, steps):
    if hook._last_global_step is not None:  # pylint: disable=protected-access
      hook._last_global_step += steps  # pylint: disable=protected-access


class _SummarySaver(_Known):
  base = _train.SummarySaverHook
  methods = ("before_run", "after_run", "_get_summary_op")
  state = ("_timer", "_next_step", "_summary_writer")

  def steps_to_next(self, hook, step):
    del step
    if not hook._summary_writer:  # pylint: disable=protected-access
      return None  # Its after_run returns at once.
    if hook._next_step is None:  # pylint: disable=protected-access
      return 1
    return _timer_steps_to(hook._timer, hook._next_step)  # pylint: disable=protected-access

  def skip(self, hook, steps):
    if hook._summary_writer and hook._next_step is not None:  # pylint: disable=protected-access
      hook._next_step += steps  # pylint: disable=protected-access


class _StopAtStep(_Known):
  base = _train.StopAtStepHook
  state = ("_last_step",)

  def steps_to_next(self, hook, step):
    last = hook._last_step  # pylint: disable=protected-access
    return 1 if last is None else max(1, last - step)


class _GlobalStepWaiter(_Known):
  base = _train.GlobalStepWaiterHook
  methods = ("before_run",)
  state = ("_worker_is_started",)

  def steps_to_next(self, hook, step):
    del step
    return None if hook._worker_is_started else 1  # pylint: disable=protected-access


class _NanTensor(_Known):
  """Checked inside the call (the runner stops at the first NaN loss)."""
  base = _train.NanTensorHook
  state = ("_loss_tensor", "_fail_on_nan_loss")


_KNOWN = (_LoggingTensor(), _StepCounter(), _SummarySaver(), _StopAtStep(),
          _GlobalStepWaiter(), _NanTensor())


def _same_methods(cls: type, base: type, names: Sequence[str]) -> bool:
  return all(getattr(cls, name, None) is getattr(base, name) for name in names)


def known_behaviour(hook: Any, loss: Any) -> Optional[_Known]:
  """How `hook` behaves per step, or None when that is unknown.

  Args:
    hook: a SessionRunHook.
    loss: the model's loss tensor (the one checked for NaN in the call).
  """
  cls = type(hook)
  if _same_methods(cls, _BASE, ("before_run", "after_run")):
    return _Known()  # Never looks at a step.
  for known in _KNOWN:
    if (isinstance(hook, known.base) and
        _same_methods(cls, known.base, known.methods) and
        all(hasattr(hook, name) for name in known.state)):
      if isinstance(known, _StepCounter) and hook._steps_per_run != 1:  # pylint: disable=protected-access
        return None
      if isinstance(known, _NanTensor) and (
          loss is None or hook._loss_tensor is not loss):  # pylint: disable=protected-access
        return None
      return known
  return None


class HookCadence:
  """The step cadences of one train() call's hooks.

  Made after the hooks' after_create_session (StopAtStepHook knows its last
  step only then).

  Args:
    hooks: the call's hooks, in order.
    loss: the model's loss tensor.
    session: what the hooks get as `run_context.session`.
  """

  def __init__(self, hooks: Sequence[Any], loss: Any, session: Any):
    self._session = session
    self._known: List[Tuple[Any, Optional[_Known]]] = [
        (hook, known_behaviour(hook, loss)) for hook in hooks]
    self.unknown = [type(h).__name__ for h, k in self._known if k is None]

  @property
  def checks_nan(self) -> bool:
    """Whether a NanTensorHook watches the loss (then each step is checked)."""
    return any(isinstance(k, _NanTensor) for _, k in self._known)

  @property
  def counts_iterations_only(self) -> bool:
    """No hook looks at the global step: fit for evaluation and prediction.

    (Their steps do not move global_step; LoggingTensorHook counts its own
    after_run calls.)
    """
    return all(type(k) in (_Known, _LoggingTensor) for _, k in self._known)

  def steps_to_next(self, step: int) -> Optional[int]:
    """Steps (>= 1) to run up to the next one a hook acts at; None: no limit.

    Args:
      step: the global step now (the next step's value before it runs).
    """
    if self.unknown:
      return 1
    wanted = [k.steps_to_next(h, step) for h, k in self._known]
    wanted = [n for n in wanted if n is not None]
    return min(wanted) if wanted else None

  def skip(self, steps: int) -> None:
    """Counts `steps` steps the hooks did not see (negative: takes back)."""
    if steps:
      for hook, known in self._known:
        known.skip(hook, steps)

  def nan_seen(self, loss_value: Any) -> bool:
    """What the NanTensorHooks do on a NaN loss at a step they did not see.

    They log and raise NanLossDuringTrainingError, or log and request a
    stop, exactly as their after_run would.

    Returns:
      True when one requested a stop.
    """
    context = _train.SessionRunContext(
        original_args=_train.SessionRunArgs({}), session=self._session)
    values = _train.SessionRunValues(results=loss_value, options=None,
                                     run_metadata=None)
    for hook, known in self._known:
      if isinstance(known, _NanTensor):
        hook.after_run(context, values)
    return context.stop_requested
