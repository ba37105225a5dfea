"""Metric lines a program prints, and their differences between two runs.

A line of stdout is a metric line when it holds at least one `name = number`,
`name: number` or `'name': number` pair (numpy scalars such as
`np.float32(0.5)` count as their number), e.g. `loss = 0.69, step = 10` or
the dict `evaluate()` returns when printed. The n-th metric line of one run
is compared with the n-th of the other: the same names, the same numbers
(integers exactly, others within rtol/atol). Other lines are not compared.
"""

import re
from typing import List, Tuple

from migration.diff import values
from migration.diff.result import Difference

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf"
_PAIR = re.compile(
    r"""(?<![\w.])['"]?(?P<name>[A-Za-z_][\w./-]*)['"]?\s*[=:]\s*"""
    r"(?:np\.\w+\(|numpy\.\w+\()?(?P<value>" + _NUMBER + r")(?![\w.])")

Line = List[Tuple[str, str]]  # [(name, number text)]


def metric_lines(text: str) -> List[Line]:
  """The metric lines of a program's output, as (name, number) pairs."""
  lines = []
  for line in text.splitlines():
    pairs = [(m.group("name"), m.group("value")) for m in _PAIR.finditer(line)]
    if pairs:
      lines.append(pairs)
  return lines


def _is_int(text: str) -> bool:
  return re.fullmatch(r"[-+]?\d+", text) is not None


def compare(old_text: str, new_text: str, rtol: float,
            atol: float) -> List[Difference]:
  """Differences between the metric lines of two outputs (kind `printed`)."""
  old, new = metric_lines(old_text), metric_lines(new_text)
  differences = []
  if len(old) != len(new):
    differences.append(Difference(
        "printed", "stdout", f"{len(old)} metric lines old vs {len(new)} "
        "new"))
  for number, (a, b) in enumerate(zip(old, new), 1):
    where = f"stdout metric line {number}"
    names_a, names_b = [n for n, _ in a], [n for n, _ in b]
    if names_a != names_b:
      differences.append(Difference(
          "printed", where, f"names old {names_a} vs new {names_b}"))
      continue
    for (name, x), (_, y) in zip(a, b):
      if _is_int(x) and _is_int(y):
        differs = int(x) != int(y)
      else:
        differs = values.difference(float(x), float(y), rtol, atol) is not None
      if differs:
        differences.append(Difference(
            "printed", f"{where}: {name}", f"old {x} vs new {y}"))
  return differences
