"""Comparing arrays: exact for integers, bools and strings; rtol/atol else."""

from typing import Optional

import numpy as np


def _is_float(array: np.ndarray) -> bool:
  return np.issubdtype(array.dtype, np.floating) or np.issubdtype(
      array.dtype, np.complexfloating)


def describe(value) -> str:
  """A short text for a value (scalars in full, arrays by shape and head)."""
  array = np.asarray(value)
  if array.ndim == 0:
    item = array.item()
    return repr(item.decode("utf-8", "replace") if isinstance(item, bytes)
                else item)
  flat = array.reshape(-1)
  head = ", ".join(describe(v) for v in flat[:3])
  more = ", ..." if flat.size > 3 else ""
  return f"{array.dtype}{list(array.shape)} [{head}{more}]"


def difference(old, new, rtol: float, atol: float) -> Optional[str]:
  """None when `old` and `new` match, else a sentence saying how they differ.

  Floats match within `rtol`/`atol` (numpy.isclose, NaN equal to NaN);
  integers, bools and strings must be equal.

  Args:
    old: the old side's value (anything numpy.asarray takes).
    new: the new side's value.
    rtol: relative tolerance for floats.
    atol: absolute tolerance for floats.
  """
  old, new = np.asarray(old), np.asarray(new)
  if old.shape != new.shape:
    return f"shape old {list(old.shape)} vs new {list(new.shape)}"
  if _is_float(old) and _is_float(new):
    a, b = old.astype(np.float64), new.astype(np.float64)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
      return None
    gap = np.where(close, 0.0, np.abs(a - b))
    gap = np.where(np.isnan(gap), np.inf, gap)
    index = np.unravel_index(int(np.argmax(gap)), a.shape) if a.ndim else ()
    where = f"[{', '.join(str(i) for i in index)}]" if index else "the value"
    count = int((~close).sum())
    old_item, new_item = a[index].item(), b[index].item()
    return (f"{count} of {a.size} values differ (rtol {rtol:g}, atol "
            f"{atol:g}); largest at {where}: old {old_item!r} vs new "
            f"{new_item!r} (|diff| {abs(old_item - new_item):.3g})")
  if old.dtype.kind in "SUO" or new.dtype.kind in "SUO":
    equal = old.tolist() == new.tolist()
  else:
    equal = np.array_equal(old, new)
  if equal:
    return None
  if old.ndim == 0:
    return f"old {describe(old)} vs new {describe(new)}"
  unequal = old != new
  index = np.unravel_index(int(np.argmax(unequal)), old.shape)
  return (f"{int(unequal.sum())} of {old.size} values differ (exact); first "
          f"at [{', '.join(str(i) for i in index)}]: old "
          f"{describe(old[index])} vs new {describe(new[index])}")
