"""Differences between the facts two runs of one program left (runner.py).

Integers, strings and structure compare exactly; floats to a tolerance that
float32 arithmetic on two TensorFlow versions needs (see DEFAULT_RTOL).
"""

import dataclasses
import math
from typing import Any, Dict, List

import numpy as np

# Measured over seeds 0-49: float32 values of the same program on TF 2.15
# and 2.21 agree to ~1e-6 relative after <= 13 steps; 1e-4 leaves room for
# Adam/RMSProp divisions by small numbers without hiding a wrong step.
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5

KINDS = ("error", "results-keys", "results-structure", "results-value",
         "model-dirs", "layout", "checkpoints", "variable-names",
         "variable-spec", "variable-value", "event-tags", "event-steps",
         "event-value")


@dataclasses.dataclass(frozen=True)
class Difference:
  """One difference: its kind (KINDS), where it is, and what each side had."""
  kind: str
  where: str
  detail: str

  def to_json(self) -> Dict[str, str]:
    return dataclasses.asdict(self)


def _short(value: Any) -> str:
  text = repr(value)
  return text if len(text) <= 120 else text[:117] + "..."


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
  if math.isnan(a) or math.isnan(b):
    return math.isnan(a) and math.isnan(b)
  return abs(a - b) <= atol + rtol * abs(b)


def _results(old: Any, new: Any, where: str, out: List[Difference],
             rtol: float, atol: float) -> None:
  if isinstance(old, dict) and isinstance(new, dict):
    only = sorted(set(old) ^ set(new))
    if only:
      out.append(Difference(
          "results-keys", where or "results",
          f"only old: {sorted(set(old) - set(new))}; "
          f"only new: {sorted(set(new) - set(old))}"))
    for key in sorted(set(old) & set(new)):
      _results(old[key], new[key], f"{where}/{key}" if where else key, out,
               rtol, atol)
    return
  if isinstance(old, list) and isinstance(new, list):
    if len(old) != len(new):
      out.append(Difference("results-structure", where,
                            f"old has {len(old)} items, new {len(new)}"))
      return
    for i, (a, b) in enumerate(zip(old, new)):
      _results(a, b, f"{where}[{i}]", out, rtol, atol)
    return
  numbers = (int, float)
  if (isinstance(old, numbers) and isinstance(new, numbers)
      and not isinstance(old, bool) and not isinstance(new, bool)):
    if isinstance(old, float) or isinstance(new, float):
      if type(old) is not type(new):
        out.append(Difference("results-structure", where,
                              f"old {_short(old)}, new {_short(new)}"))
      elif not _close(old, new, rtol, atol):
        out.append(Difference("results-value", where,
                              f"old {old!r}, new {new!r}"))
      return
  if old != new or type(old) is not type(new):
    kind = ("results-value" if type(old) is type(new)
            else "results-structure")
    out.append(Difference(kind, where, f"old {_short(old)}, new {_short(new)}"))


def _events(old: Dict, new: Dict, where: str, out: List[Difference],
            rtol: float, atol: float) -> None:
  for folder in sorted(set(old) | set(new)):
    a, b = old.get(folder, {}), new.get(folder, {})
    only = sorted(set(a) ^ set(b))
    if only:
      out.append(Difference(
          "event-tags", f"{where}/{folder}",
          f"only old: {sorted(set(a) - set(b))}; "
          f"only new: {sorted(set(b) - set(a))}"))
    for tag in sorted(set(a) & set(b)):
      steps_a = [p[0] for p in a[tag]]
      steps_b = [p[0] for p in b[tag]]
      if steps_a != steps_b:
        out.append(Difference("event-steps", f"{where}/{folder}:{tag}",
                              f"old {steps_a}, new {steps_b}"))
        continue
      for (step, x), (_, y) in zip(a[tag], b[tag]):
        if x is None or y is None:
          continue
        if not _close(x, y, rtol, atol):
          out.append(Difference("event-value",
                                f"{where}/{folder}:{tag}@{step}",
                                f"old {x!r}, new {y!r}"))
          break


def _model_dir(name: str, old: Dict, new: Dict, old_values, new_values,
               out: List[Difference], rtol: float, atol: float) -> None:
  layout_a, layout_b = set(old["layout"]), set(new["layout"])
  if layout_a != layout_b:
    out.append(Difference("layout", name,
                          f"only old: {sorted(layout_a - layout_b)}; "
                          f"only new: {sorted(layout_b - layout_a)}"))
  if old["checkpoints"] != new["checkpoints"]:
    out.append(Difference("checkpoints", name,
                          f"old {old['checkpoints']}, "
                          f"new {new['checkpoints']}"))
  va, vb = old["variables"], new["variables"]
  if set(va) != set(vb):
    out.append(Difference("variable-names", name,
                          f"only old: {sorted(set(va) - set(vb))}; "
                          f"only new: {sorted(set(vb) - set(va))}"))
  for var in sorted(set(va) & set(vb)):
    if va[var] != vb[var]:
      out.append(Difference("variable-spec", f"{name}:{var}",
                            f"old {va[var]}, new {vb[var]}"))
      continue
    key = f"{name}/{var}"
    if key not in old_values or key not in new_values:
      continue
    a, b = np.asarray(old_values[key]), np.asarray(new_values[key])
    if a.dtype.kind in "fc":
      equal = np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    else:
      equal = np.array_equal(a, b)
    if not equal:
      detail = (f"max abs diff {np.max(np.abs(a - b)):.3g}"
                if a.dtype.kind in "fc" else
                f"old {_short(a.tolist())}, new {_short(b.tolist())}")
      out.append(Difference("variable-value", f"{name}:{var}", detail))
  _events(old["events"], new["events"], name, out, rtol, atol)


def compare(old: Dict, new: Dict, old_values: Dict[str, np.ndarray],
            new_values: Dict[str, np.ndarray], *, rtol: float = DEFAULT_RTOL,
            atol: float = DEFAULT_ATOL,
            model_dirs: bool = True) -> List[Difference]:
  """Every difference between two facts dicts (and their variable values).

  With `model_dirs=False` only the error, the program's results and which
  model_dirs exist compare (the sweep diffs the model_dirs themselves with
  migration.diff_model_dirs).
  """
  out: List[Difference] = []
  ea, eb = old.get("error"), new.get("error")
  if (ea is None) != (eb is None) or (ea and ea["type"] != eb["type"]):
    out.append(Difference(
        "error", "program",
        f"old {ea and (ea['type'] + ': ' + ea['message'])}; "
        f"new {eb and (eb['type'] + ': ' + eb['message'])}"))
  _results(old.get("results", {}), new.get("results", {}), "", out, rtol,
           atol)
  dirs_a, dirs_b = old.get("model_dirs", {}), new.get("model_dirs", {})
  if set(dirs_a) != set(dirs_b):
    out.append(Difference("model-dirs", "workdir",
                          f"old {sorted(dirs_a)}, new {sorted(dirs_b)}"))
  for name in sorted(set(dirs_a) & set(dirs_b)) if model_dirs else ():
    _model_dir(name, dirs_a[name], dirs_b[name], old_values, new_values, out,
               rtol, atol)
  return out
