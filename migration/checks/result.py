"""What a check returns, its tolerances, and the array comparison they share."""

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

PASS, FAIL, NOT_APPLICABLE = "pass", "FAIL", "n/a"


@dataclasses.dataclass(frozen=True)
class Tolerance:
  """|new - old| <= atol + rtol * |old|, elementwise.

  With per_step, the bound at training step k is k times (atol, rtol): see
  docs/migration.md for why trajectories get a bound that grows.
  """
  rtol: float = 1e-5
  atol: float = 1e-6
  per_step: bool = False

  def at_step(self, step: int) -> "Tolerance":
    if not self.per_step:
      return self
    return Tolerance(self.rtol * step, self.atol * step)

  def describe(self) -> str:
    text = f"rtol {self.rtol:g}, atol {self.atol:g}"
    return text + " per step" if self.per_step else text


SINGLE_STEP = Tolerance()
DEFAULT_TOLERANCES: Dict[str, Tolerance] = {
    "structure": SINGLE_STEP, "initialization": SINGLE_STEP,
    "inputs": Tolerance(rtol=0.0, atol=0.0), "forward": SINGLE_STEP,
    "gradients": SINGLE_STEP,
    "trajectory": Tolerance(rtol=1e-5, atol=1e-6, per_step=True),
    "eval_metrics": SINGLE_STEP, "predictions": SINGLE_STEP,
    "saved_model": SINGLE_STEP}


@dataclasses.dataclass
class CheckResult:
  """One check's verdict.

  Attributes:
    name: the check.
    verdict: "pass", "FAIL" or "n/a" (nothing to compare, e.g. no receiver).
    summary: one line saying what was compared and what was found.
    worst: the worst offender (a variable, metric, batch or signature).
    numbers: the numbers behind the verdict (max differences, tolerance).
    cause: when it fails, the likely cause and where to look.
  """
  name: str
  verdict: str
  summary: str
  worst: str = ""
  numbers: Dict[str, Any] = dataclasses.field(default_factory=dict)
  cause: str = ""

  @property
  def passed(self) -> bool:
    return self.verdict != FAIL


@dataclasses.dataclass
class Difference:
  """The worst element of the worst array of a comparison."""
  name: str = ""
  max_abs: float = 0.0
  max_rel: float = 0.0
  ratio: float = 0.0  # |diff| / (atol + rtol |old|); above 1 fails.
  old: Optional[float] = None
  new: Optional[float] = None
  index: Tuple[int, ...] = ()
  largest_abs: float = 0.0  # The largest |diff| over every array compared.

  def as_numbers(self) -> Dict[str, Any]:
    return {"max_abs_diff": self.max_abs, "max_rel_diff": self.max_rel,
            "old_value": self.old, "new_value": self.new,
            "index": list(self.index), "largest_abs_diff": self.largest_abs}


def _numeric(value) -> np.ndarray:
  array = np.asarray(value)
  if array.dtype.kind in "biuf":
    return array.astype(np.float64)
  return array


def compare_arrays(old: Dict[str, Any], new: Dict[str, Any],
                   tolerance: Tolerance) -> Tuple[List[str], List[str],
                                                  List[str], Difference]:
  """Compares arrays by name.

  Returns:
    (missing in new, extra in new, names whose shapes differ, the worst
    difference among the rest by tolerance ratio).
  """
  missing = sorted(set(old) - set(new))
  extra = sorted(set(new) - set(old))
  reshaped, worst, largest = [], Difference(), 0.0
  for name in sorted(set(old) & set(new)):
    a, b = _numeric(old[name]), _numeric(new[name])
    if a.shape != b.shape:
      reshaped.append(name)
      continue
    if a.size == 0:
      continue
    if a.dtype.kind != "f" or b.dtype.kind != "f":
      unequal = a != b
      if np.any(unequal):
        index = tuple(int(i) for i in np.argwhere(unequal)[0])
        candidate = Difference(name, float("inf"), float("inf"),
                               float("inf"), str(a[index]), str(b[index]),
                               index)
        if candidate.ratio > worst.ratio:
          worst = candidate
      continue
    diff = np.abs(a - b)
    largest = max(largest, float(diff.max()))
    bound = tolerance.atol + tolerance.rtol * np.abs(a)
    with np.errstate(divide="ignore", invalid="ignore"):
      ratio = np.where(diff == 0, 0.0, diff / np.maximum(bound, 1e-300))
      rel = np.where(diff == 0, 0.0,
                     np.where(a == 0, np.inf, diff / np.abs(a)))
    flat = int(np.argmax(ratio))
    index = tuple(int(i) for i in np.unravel_index(flat, a.shape))
    candidate = Difference(name, float(diff.max()), float(rel.max()),
                           float(ratio.reshape(-1)[flat]),
                           float(a[index]), float(b[index]), index)
    if candidate.ratio > worst.ratio or not worst.name:
      worst = candidate
  worst.largest_abs = largest
  return missing, extra, reshaped, worst


def array_check(name: str, what: str, old: Dict[str, Any],
                new: Dict[str, Any], tolerance: Tolerance, cause: str
               ) -> CheckResult:
  """The common shape of a check that compares named arrays."""
  missing, extra, reshaped, worst = compare_arrays(old, new, tolerance)
  numbers = dict(worst.as_numbers(), tolerance=tolerance.describe(),
                 compared=len(set(old) & set(new)))
  if missing or extra or reshaped:
    parts = []
    if missing:
      parts.append(f"missing in new: {', '.join(missing)}")
    if extra:
      parts.append(f"extra in new: {', '.join(extra)}")
    if reshaped:
      parts.append(f"shape differs: {', '.join(reshaped)}")
    return CheckResult(name, FAIL, f"{what}: " + "; ".join(parts),
                       (missing + extra + reshaped)[0], numbers, cause)
  if not old:
    return CheckResult(name, NOT_APPLICABLE, f"{what}: nothing to compare")
  if worst.ratio > 1.0:
    return CheckResult(
        name, FAIL,
        f"{what}: {worst.name}{list(worst.index)} old {worst.old} vs new "
        f"{worst.new} (|diff| {worst.max_abs:.3g}, rel {worst.max_rel:.3g}; "
        f"{tolerance.describe()})", worst.name, numbers, cause)
  return CheckResult(name, PASS,
                     f"{what}: {len(old)} equal within "
                     f"{tolerance.describe()} (max |diff| "
                     f"{worst.largest_abs:.3g})", worst.name, numbers)


def not_run(name: str, old_error: Optional[str], new_error: Optional[str]
           ) -> Optional[CheckResult]:
  """A result when a side could not run the phase, else None.

  One side failing fails the check; both failing with the same error (a
  legacy program that cannot predict, say) leaves nothing to compare: n/a.
  """
  if not old_error and not new_error:
    return None
  if old_error and new_error and (old_error.split(":")[:2] ==
                                  new_error.split(":")[:2]):
    return CheckResult(name, NOT_APPLICABLE, "both sides raise the same "
                       f"error ({old_error}): the program cannot do this on "
                       "either, so there is nothing to compare", "",
                       {"old_error": old_error, "new_error": new_error})
  side, error = ("old", old_error) if old_error else ("new", new_error)
  return CheckResult(name, FAIL, f"the {side} side could not run: {error}",
                     side, {}, f"The {side} run raised; see its "
                     "recording.json 'tracebacks' for where.")
