"""Eval metrics: evaluate() of the same checkpoint on the same batches."""

from migration.checks.result import CheckResult, array_check, not_run

NAME = "eval_metrics"
CAUSE = ("From the same checkpoint and batches, evaluation differs: the "
         "EVAL-mode graph is not the old one. Typical: dropout or batch norm "
         "left in training mode in EVAL (training=True, or "
         "mode == TRAIN tested wrongly), or a metric defined differently.")


def run(old, new, tolerance, earlier) -> CheckResult:
  del earlier
  failed = not_run(NAME, old.error("eval"), new.error("eval"))
  if failed:
    return failed
  return array_check(NAME, "metrics", old.meta.get("eval_metrics", {}),
                     new.meta.get("eval_metrics", {}), tolerance, CAUSE)
