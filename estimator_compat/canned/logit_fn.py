"""`tf.estimator.experimental.call_logit_fn`: call a logit_fn as canned
estimators did, with the arguments it declares."""

from typing import Any, Callable

import tensorflow as tf

from estimator_compat.front.fn_args import fn_args


def _is_logits(value: Any) -> bool:
  if isinstance(value, tf.Tensor):
    return True
  return isinstance(value, dict) and all(
      isinstance(key, str) and isinstance(item, tf.Tensor)
      for key, item in value.items())


def call_logit_fn(logit_fn: Callable[..., Any], features: Any, mode: str,
                  params: Any, config: Any) -> Any:
  """Calls `logit_fn(features=..., [mode, params, config])`.

  Of `mode`, `params` and `config`, only the ones logit_fn declares are
  passed.

  Returns:
    The logits: a Tensor, or a dict of Tensors keyed by head name.

  Raises:
    ValueError: logit_fn returned something else.
  """
  offered = {"mode": mode, "params": params, "config": config}
  declared = fn_args(logit_fn)
  logits = logit_fn(features=features,
                    **{k: v for k, v in offered.items() if k in declared})
  if not _is_logits(logits):
    raise ValueError(
        "logit_fn should return a Tensor or a dictionary mapping strings to "
        f"Tensors.  logit_fn returned: {logits}. Fix: return the logits "
        "tensor, or {head_name: logits tensor} for several heads.")
  return logits
