"""Inputs: the input_fns give the same batches (train, eval and predict)."""

import numpy as np

from migration.checks import label_shift
from migration.checks.result import CheckResult, FAIL, PASS, not_run

NAME = "inputs"


def _describe(key: str) -> str:
  name, index, part = key.split("/", 2)
  kind, _, sub = part.partition(":")
  what = "labels" if kind == "l" else "features"
  return f"{name} batch {int(index)} {what}{'[' + sub + ']' if sub else ''}"


def run(old, new, tolerance, earlier) -> CheckResult:
  del earlier
  failed = not_run(NAME, old.error(), new.error())
  if failed:
    return failed
  before, after = old.arrays("inputs"), new.arrays("inputs")
  missing = sorted(set(before) - set(after))
  extra = sorted(set(after) - set(before))
  differing = []
  for key in sorted(set(before) & set(after)):
    a, b = before[key], after[key]
    if a.shape != b.shape:
      differing.append((key, "shape", a.shape, b.shape))
    elif a.dtype.kind == "f" or b.dtype.kind == "f":
      if not np.allclose(a, b, rtol=tolerance.rtol, atol=tolerance.atol):
        rows = int(np.any(~np.isclose(a, b, rtol=tolerance.rtol,
                                      atol=tolerance.atol),
                          axis=tuple(range(1, a.ndim))).sum()) if a.ndim else 1
        differing.append((key, "rows", rows, len(a) if a.ndim else 1))
    elif not np.array_equal(a, b):
      rows = int(np.any(a != b, axis=tuple(range(1, a.ndim))).sum()
                ) if a.ndim else 1
      differing.append((key, "rows", rows, len(a) if a.ndim else 1))
  numbers = {"arrays": len(before), "missing": missing, "extra": extra,
             "differing": [_describe(d[0]) for d in differing]}
  if missing or extra:
    worst = (missing + extra)[0]
    return CheckResult(NAME, FAIL, f"the input_fns yield different parts "
                       f"(missing in new: {missing}, extra: {extra})",
                       _describe(worst), numbers,
                       "The input_fns return different features or label "
                       "keys, or a different number of batches.")
  if differing:
    key, kind, x, y = differing[0]
    detail = (f"shape {x} vs {y}" if kind == "shape"
              else f"{x} of {y} rows differ")
    labels_only = all(d[0].split("/", 2)[2].startswith("l")
                      for d in differing)
    shift = label_shift.constant_shift(before, after, differing)
    cause = (label_shift.describe(shift) if labels_only and shift else
             "The features match but the labels do not: the labels are "
             "shuffled or ordered differently from the features (a shuffle "
             "or seed applied to labels alone?)." if labels_only else
             "The input_fns give different data: a different shuffle or "
             "seed, preprocessing, batch size or file order.")
    return CheckResult(NAME, FAIL, f"{_describe(key)}: {detail} "
                       f"({len(differing)} arrays differ)", _describe(key),
                       numbers, cause)
  return CheckResult(NAME, PASS, f"{len(before)} arrays in "
                     f"{len(old.batches('train'))} train, "
                     f"{len(old.batches('eval'))} eval, "
                     f"{len(old.batches('predict'))} predict batches: equal",
                     "", numbers)
