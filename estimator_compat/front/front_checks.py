"""Checks of the Estimator's own arguments, worded as the Estimator's.

Each error starts with the sentence the Estimator raised (programs and tests
match it), then says how to fix the problem.
"""

import os
from typing import Any, List, Optional, Sequence

from estimator_compat.hooks import CheckpointSaverListener, SessionRunHook
from estimator_compat.run_config import RunConfig

# Estimator members a subclass may override, as the Estimator allowed.
_OVERRIDABLE = frozenset({"model_fn", "latest_checkpoint"})

# train(saving_listeners=...) with checkpoints turned off (both engines).
NO_SAVER_FOR_LISTENERS = (
    "There should be a CheckpointSaverHook to use saving_listeners. Please "
    "set one of the RunConfig.save_checkpoints_steps or "
    "RunConfig.save_checkpoints_secs. Fix: RunConfig(save_checkpoints_steps="
    "N), or drop saving_listeners: checkpoints are disabled.")


def check_config(config: Any) -> RunConfig:
  """Returns `config`, or a default RunConfig when it is None.

  Raises:
    ValueError: config is not a RunConfig.
  """
  if config is None:
    return RunConfig()
  if not isinstance(config, RunConfig):
    raise ValueError(
        f"config must be an instance of `RunConfig`, but provided {config}. "
        "Fix: pass tf.estimator.RunConfig(...), or None for the defaults.")
  return config


def check_model_dir(model_dir: Optional[str],
                    config_model_dir: Optional[str]) -> None:
  """Refuses two different model_dirs (the argument and the RunConfig's).

  Raises:
    ValueError: both are set and name different directories.
  """
  if not model_dir or not config_model_dir:
    return
  if os.path.abspath(os.fspath(model_dir)) != os.path.abspath(
      os.fspath(config_model_dir)):
    raise ValueError(
        "`model_dir` are set both in constructor and `RunConfig`, but with "
        f"different values. In constructor: '{model_dir}', in `RunConfig`: "
        f"'{config_model_dir}'. Fix: set only one of them.")


def check_hooks(hooks: Optional[Sequence[Any]]) -> List[Any]:
  """Returns `hooks` as a list.

  Raises:
    TypeError: one of them is not a SessionRunHook.
  """
  hooks = list(hooks or [])
  for hook in hooks:
    if not isinstance(hook, SessionRunHook):
      raise TypeError(
          f"Hooks must be a SessionRunHook, given: {hook}. Fix: pass "
          "instances of a tf.estimator.SessionRunHook subclass.")
  return hooks


def check_saving_listeners(listeners: Optional[Sequence[Any]]) -> List[Any]:
  """Returns `listeners` as a list.

  Raises:
    TypeError: one of them is not a CheckpointSaverListener.
  """
  listeners = list(listeners or [])
  for listener in listeners:
    if not isinstance(listener, CheckpointSaverListener):
      raise TypeError(
          "saving_listeners must be a list of CheckpointSaverListener, "
          f"given: {listener}. Fix: pass instances of a "
          "tf.estimator.CheckpointSaverListener subclass.")
  return listeners


def check_not_overridden(base: type, obj: Any) -> None:
  """Refuses a subclass of `base` that redefines one of its members.

  The Estimator's methods call each other; a subclass that replaced one
  (e.g. `predict`) would change what the others do without saying so.
  estimator_compat's own subclasses (TPUEstimator) are exempt, as the
  Estimator exempted its TPUEstimator.

  Raises:
    ValueError: a class between type(obj) and `base` redefines a member.
  """
  members = {name for name in dir(base) if not name.startswith("__")}
  overridden = set()
  for cls in type(obj).__mro__:
    if cls is base:
      break
    if cls.__module__.startswith("estimator_compat."):
      continue  # Ours (TPUEstimator), as the Estimator exempted its own.
    for name in vars(cls):
      if (name in members and name not in _OVERRIDABLE and
          vars(cls)[name] is not getattr(base, name)):
        overridden.add(name)
  if overridden:
    raise ValueError(
        "Subclasses of Estimator cannot override members of Estimator. "
        f"{type(obj)} does override {sorted(overridden)}. Fix: give the "
        "subclass's method another name, or wrap the Estimator instead of "
        "subclassing it.")


def no_checkpoint_error(model_dir: str) -> ValueError:
  """The error for an operation that needs a trained model."""
  return ValueError(
      f"Could not find trained model in model_dir: {model_dir}. Fix: train "
      "the Estimator first, or point model_dir at a trained model.")
