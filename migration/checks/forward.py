"""Forward pass: loss and predictions of step 1 from the same checkpoint."""

from migration.checks.result import CheckResult, array_check, not_run

NAME = "forward"


def run(old, new, tolerance, earlier) -> CheckResult:
  failed = not_run(NAME, old.error("probe"), new.error("probe"))
  if failed:
    return failed
  cause = ("From the same checkpoint and batch the TRAIN-mode model gives "
           "different outputs: the layers, their order, an activation, the "
           "loss function or its reduction differs.")
  if "inputs" in earlier and not earlier["inputs"].passed:
    cause = "The batches differ already (see the inputs check)."
  return array_check(NAME, "step-1 loss and predictions",
                     old.arrays("forward"), new.arrays("forward"), tolerance,
                     cause)
