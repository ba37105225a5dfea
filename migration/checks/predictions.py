"""Predictions: predict() of the same checkpoint on the same features."""

from migration.checks.result import CheckResult, array_check, not_run

NAME = "predictions"
CAUSE = ("From the same checkpoint and features, PREDICT mode gives other "
         "outputs: the PREDICT-mode graph differs (dropout or batch norm in "
         "training mode, a different head or post-processing).")


def run(old, new, tolerance, earlier) -> CheckResult:
  del earlier
  failed = not_run(NAME, old.error("predict"), new.error("predict"))
  if failed:
    return failed
  return array_check(NAME, "predictions", old.arrays("predictions"),
                     new.arrays("predictions"), tolerance, CAUSE)
