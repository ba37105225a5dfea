"""The migration checks: each compares one thing the old and new runs did.

Every check returns a CheckResult with a verdict, the worst offender named,
the numbers behind the verdict and, when it fails, the likely cause. Checks
run in a fixed order (CHECKS) so that a cause can point at an earlier one:
gradients that differ while the forward pass matches mean something else
than gradients that differ because the forward pass already did.
"""

from typing import Dict, List, Optional

from migration.checks import (eval_metrics, forward, gradients,
                              initialization, inputs, predictions,
                              saved_model, structure, trajectory)
from migration.checks.result import (CheckResult, DEFAULT_TOLERANCES,
                                     Tolerance)
from migration.recorders.recording_reader import Recording

CHECKS = (structure, initialization, inputs, forward, gradients, trajectory,
          eval_metrics, predictions, saved_model)
NAMES = tuple(module.NAME for module in CHECKS)

__all__ = ["CHECKS", "NAMES", "CheckResult", "DEFAULT_TOLERANCES",
           "Tolerance", "run_all"]


def run_all(old: Recording, new: Recording,
            tolerances: Optional[Dict[str, Tolerance]] = None,
            only: Optional[List[str]] = None) -> List[CheckResult]:
  """Runs every check (or those named in `only`) in order."""
  chosen = dict(DEFAULT_TOLERANCES)
  chosen.update(tolerances or {})
  results: List[CheckResult] = []
  for module in CHECKS:
    if only and module.NAME not in only:
      continue
    results.append(module.run(old, new, chosen[module.NAME],
                              {r.name: r for r in results}))
  return results
