"""Names a rewrite's optimizer setting that differs from v1's defaults.

A TF2 rewrite records its tf-keras optimizer's config (recording meta
"optimizer"). When the trajectory parts, the settings whose tf-keras default
differs from the v1 optimizer's are the first suspects: Adam's epsilon is
1e-7 in tf-keras and 1e-8 in tf.compat.v1.train.AdamOptimizer.
"""

from typing import Any, Dict, Optional

# (tf-keras optimizer name, setting): (the v1 default, the v1 optimizer).
_V1_DEFAULTS = {("Adam", "epsilon"): (1e-8, "AdamOptimizer"),
                ("Adagrad", "epsilon"): (None, "AdagradOptimizer"),
                ("RMSprop", "epsilon"): (1e-10, "RMSPropOptimizer"),
                ("RMSprop", "rho"): (0.9, "RMSPropOptimizer")}


def hint(config: Optional[Dict[str, Any]]) -> str:
  """A sentence naming settings that differ from the v1 optimizer's, or ''."""
  if not config:
    return ""
  name = config.get("name")
  found = []
  for (optimizer, key), (v1_value, v1_name) in _V1_DEFAULTS.items():
    if optimizer == name and v1_value is not None and key in config and (
        abs(float(config[key]) - v1_value) > 1e-12):
      found.append(f"{key}={config[key]:g} (tf.compat.v1.train.{v1_name}'s "
                   f"default is {v1_value:g})")
  if not found:
    return ""
  return (f" The rewrite's tf-keras {name} has " + ", ".join(found) +
          ": set it to the legacy value.")
