"""WarmStartSettings: which variables to take from another checkpoint."""

import collections
from typing import Any, Optional, Union

import tensorflow as tf

VocabInfo = tf.compat.v1.train.VocabInfo


class WarmStartSettings(
    collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start",
        "var_name_to_vocab_info", "var_name_to_prev_var_name"
    ])):
  """Settings for warm-starting in an Estimator, as in `tf.estimator`.

  Warm-starting applies only when model_dir holds no checkpoint yet; once one
  exists, training resumes from it.
  """

  def __new__(cls,
              ckpt_to_initialize_from: str,
              vars_to_warm_start: Any = ".*",
              var_name_to_vocab_info: Optional[dict] = None,
              var_name_to_prev_var_name: Optional[dict] = None):
    if not ckpt_to_initialize_from:
      raise ValueError(
          "`ckpt_to_initialize_from` MUST be set in WarmStartSettings. Fix: "
          "pass a checkpoint path or a model_dir.")
    return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start,
                           var_name_to_vocab_info or {},
                           var_name_to_prev_var_name or {})


def resolve(warm_start_from: Union[None, str, WarmStartSettings]
           ) -> Optional[WarmStartSettings]:
  """Normalizes Estimator(warm_start_from=...) to settings or None.

  Raises:
    ValueError: the argument is neither a path nor WarmStartSettings.
  """
  if warm_start_from is None:
    return None
  if isinstance(warm_start_from, (str, bytes)):
    path = warm_start_from.decode() if isinstance(warm_start_from,
                                                  bytes) else warm_start_from
    return WarmStartSettings(ckpt_to_initialize_from=path)
  if isinstance(warm_start_from, WarmStartSettings):
    return warm_start_from
  raise ValueError(
      "warm_start_from must be a string or a WarmStartSettings, instead got "
      f"{type(warm_start_from)}. Fix: pass a checkpoint path, a model_dir or "
      "tf.estimator.WarmStartSettings.")
