"""SavedModel: exported signatures and their outputs on fixed inputs."""

from migration.checks.result import (CheckResult, FAIL, NOT_APPLICABLE,
                                     array_check, not_run)

NAME = "saved_model"
CAUSE = ("Served from the same checkpoint, the exported model answers "
         "differently: the serving graph (receiver, export_outputs or "
         "PREDICT-mode model) differs.")


def run(old, new, tolerance, earlier) -> CheckResult:
  del earlier
  old_export, new_export = old.meta.get("export"), new.meta.get("export")
  if old_export is None and new_export is None and not (
      old.error("export") or new.error("export")):
    return CheckResult(NAME, NOT_APPLICABLE, "no serving_input_receiver_fn "
                       "given; nothing exported")
  failed = not_run(NAME, old.error("export"), new.error("export"))
  if failed:
    return failed
  if old_export != new_export:
    keys = sorted(set(old_export or {}) | set(new_export or {}))
    worst = next(k for k in keys
                 if (old_export or {}).get(k) != (new_export or {}).get(k))
    return CheckResult(
        NAME, FAIL, f"signature {worst}: old {(old_export or {}).get(worst)} "
        f"vs new {(new_export or {}).get(worst)}", worst,
        {"old": old_export, "new": new_export},
        "The exported signatures differ (keys, input or output names): "
        "compare the receivers and export_outputs.")
  return array_check(NAME, "served outputs", old.arrays("served"),
                     new.arrays("served"), tolerance, CAUSE)
