"""Calls legacy callbacks with only the arguments they declare."""

import functools
import inspect
from typing import Any, Callable, Mapping, Tuple


def fn_args(fn: Callable[..., Any]) -> Tuple[str, ...]:
  """Names of the arguments `fn` still takes (partial-bound ones removed)."""
  bound = set()
  target = fn
  while isinstance(target, functools.partial):
    bound |= set(target.keywords or {})
    target = target.func
  try:
    params = inspect.signature(fn).parameters
  except (TypeError, ValueError):
    return ()
  names = []
  for name, param in params.items():
    if name in bound or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
      continue
    names.append(name)
  return tuple(names)


def call_with_declared_args(fn: Callable[..., Any],
                            available: Mapping[str, Any],
                            required: Tuple[str, ...] = ()) -> Any:
  """Calls `fn` with the entries of `available` it declares.

  Args:
    fn: the legacy callback (model_fn, input_fn, ...).
    available: every argument the Estimator can offer, by name.
    required: names `fn` must declare.

  Raises:
    ValueError: `fn` does not declare a required argument.
  """
  names = fn_args(fn)
  for name in required:
    if name not in names:
      raise ValueError(
          f"{getattr(fn, '__name__', fn)!s} must take an argument named "
          f"{name!r}; it takes {list(names)}.")
  return fn(**{name: available[name] for name in names if name in available})
