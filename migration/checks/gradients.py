"""Gradients: d loss / d variable of step 1 from the same checkpoint."""

from migration.checks.result import CheckResult, array_check, not_run

NAME = "gradients"


def run(old, new, tolerance, earlier) -> CheckResult:
  failed = not_run(NAME, old.error("probe"), new.error("probe"))
  if failed:
    return failed
  if "forward" in earlier and not earlier["forward"].passed:
    cause = "The forward pass differs already (see the forward check)."
  else:
    cause = ("The loss matches but its gradients do not: a stop_gradient, a "
             "regularization or auxiliary loss term, or a variable that is "
             "trainable on one side only.")
  return array_check(NAME, "step-1 gradients", old.arrays("gradients"),
                     new.arrays("gradients"), tolerance, cause)
