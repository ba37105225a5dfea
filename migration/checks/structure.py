"""Structure: the same variables, with the same shapes, dtypes and flags."""

from migration.checks.result import CheckResult, FAIL, PASS, not_run

NAME = "structure"
CAUSE = ("The model_fn builds different variables: a layer added, removed or "
         "renamed (variable scope or Keras layer name), a different optimizer "
         "(its slots), or trainable=False set on one side. A checkpoint from "
         "the old run will not load into the new model until this matches.")


def run(old, new, tolerance, earlier) -> CheckResult:
  del tolerance, earlier
  failed = not_run(NAME, old.error("init"), new.error("init"))
  if failed:
    return failed
  before = {v["name"]: v for v in old.meta.get("structure", [])}
  after = {v["name"]: v for v in new.meta.get("structure", [])}
  missing = sorted(set(before) - set(after))
  extra = sorted(set(after) - set(before))
  changed = []
  for name in sorted(set(before) & set(after)):
    for field in ("shape", "dtype", "trainable"):
      if before[name][field] != after[name][field]:
        changed.append(f"{name} {field} {before[name][field]} -> "
                       f"{after[name][field]}")
  numbers = {"old_variables": len(before), "new_variables": len(after),
             "missing": missing, "extra": extra, "changed": changed}
  if missing or extra or changed:
    parts = ([f"missing in new: {', '.join(missing)}"] if missing else []) + (
        [f"extra in new: {', '.join(extra)}"] if extra else []) + changed
    worst = (missing + extra + [c.split(" ")[0] for c in changed])[0]
    return CheckResult(NAME, FAIL, "; ".join(parts), worst, numbers, CAUSE)
  trainable = sum(1 for v in before.values() if v["trainable"])
  return CheckResult(NAME, PASS, f"{len(before)} variables ({trainable} "
                     "trainable): same names, shapes, dtypes and flags", "",
                     numbers)
