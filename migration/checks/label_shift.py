"""Recognizes labels that differ from the old ones by a constant (off by one).
"""

from typing import Any, Dict, List, Optional

import numpy as np


def constant_shift(before: Dict[str, Any], after: Dict[str, Any],
                   differing: List[Any]) -> Optional[int]:
  """k when every differing label array is the old one plus k, else None."""
  shifts = set()
  for key, *_ in differing:
    a, b = np.asarray(before[key]), np.asarray(after[key])
    if a.shape != b.shape or a.dtype.kind not in "iu" or (
        b.dtype.kind not in "iu"):
      return None
    shifts.update(np.unique(b.astype(np.int64) - a.astype(np.int64)).tolist())
  return shifts.pop() if len(shifts) == 1 and 0 not in shifts else None


def describe(shift: int) -> str:
  return (f"Every label is the old label {shift:+d}: the new input's labels "
          f"are off by {abs(shift)} (1-based vs 0-based classes, or a "
          "shift applied to the labels alone).")
