"""Initialization: a fresh start gives every variable the same values.

Both sides initialize from scratch with the check's seed; the model_fn's
random ops are seeded by their order (migration.instrument), so the same
initializers give the same numbers on every runtime.
"""

import numpy as np

from migration.checks import init_distribution
from migration.checks.result import CheckResult, array_check, not_run

NAME = "initialization"


def run(old, new, tolerance, earlier) -> CheckResult:
  del earlier
  failed = not_run(NAME, old.error("init"), new.error("init"))
  if failed:
    return failed
  if new.meta.get("initialization") == "distribution":  # A TF2 rewrite.
    return init_distribution.run(NAME, old, new, tolerance)
  before, after = old.arrays("init"), new.arrays("init")
  result = array_check(NAME, "fresh initial values", before, after,
                       tolerance, "")
  if not result.passed and result.worst in before and result.worst in after:
    a = np.asarray(before[result.worst], np.float64)
    b = np.asarray(after[result.worst], np.float64)
    result.numbers.update(old_mean=float(a.mean()), old_std=float(a.std()),
                          new_mean=float(b.mean()), new_std=float(b.std()))
    result.cause = (
        f"{result.worst} is initialized differently (old mean "
        f"{a.mean():.4g}, std {a.std():.4g}; new mean {b.mean():.4g}, std "
        f"{b.std():.4g}): its initializer, its seed, or the order of random "
        "ops in model_fn differs. Other checks start both sides from the old "
        "checkpoint, so only a fresh training run is affected.")
  elif not result.passed:
    result.cause = "The variables differ; see the structure check."
  return result
