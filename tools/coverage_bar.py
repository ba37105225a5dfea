"""Fails when a public module's branch coverage is under the bar.

Reads a `coverage json` report (tools/coverage.sh writes one) and lists each
public module whose coverage is under the bar, with its figure. A public
module is a `.py` file under `estimator_compat/` or `migration/` with no
path component that starts with a single underscore (`__init__.py` and
`__main__.py` are public: they are the package and its `python -m` entry);
docs/decisions.md, "Public modules and the coverage bar". The figure is
coverage's own "Cover" (statements and branches together), unrounded: a
module shown as 85.0% in the table may still be 84.96%.

Usage: python tools/coverage_bar.py REPORT.json [--bar PERCENT]
Exit status: 0 when every public module reaches the bar, 1 when one does
not, 2 on a report it cannot read.
"""

import argparse
import json
import sys
from typing import Dict, List, Tuple

PACKAGES = ("estimator_compat", "migration")


def is_public(path: str) -> bool:
  """Whether a measured file is a public module of the two packages.

  Args:
    path: the file's path as the report names it (relative to the repository
      root, `/` or `\\` separated).

  Returns:
    True for a `.py` file under one of `PACKAGES` whose path has no
    component starting with a single underscore.
  """
  parts = path.replace("\\", "/").split("/")
  if len(parts) < 2 or parts[0] not in PACKAGES or not parts[-1].endswith(
      ".py"):
    return False
  for part in parts:
    if part.startswith("_") and not part.startswith("__"):
      return False
  return True


def under_bar(report: Dict, bar: float) -> List[Tuple[str, float]]:
  """The public modules of a coverage json report under the bar.

  Args:
    report: the parsed `coverage json` output.
    bar: the lowest acceptable coverage, in percent.

  Returns:
    (path, percent) for each public module under `bar`, lowest first.

  Raises:
    ValueError: the report has no `files` table, or a file has no
      `summary.percent_covered`.
  """
  files = report.get("files")
  if not isinstance(files, dict):
    raise ValueError("the report has no 'files' table; write it with "
                     "`coverage json` (tools/coverage.sh does).")
  low = []
  for path, entry in files.items():
    if not is_public(path):
      continue
    try:
      percent = float(entry["summary"]["percent_covered"])
    except (KeyError, TypeError, ValueError) as e:
      raise ValueError(
          f"{path}: no summary.percent_covered in the report ({e!r}); write "
          f"it with `coverage json`.") from e
    if percent < bar:
      low.append((path, percent))
  return sorted(low, key=lambda item: (item[1], item[0]))


def main(argv: List[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("report", help="a `coverage json` report")
  parser.add_argument("--bar", type=float, default=85.0,
                      help="lowest acceptable coverage in percent (85)")
  args = parser.parse_args(argv)
  try:
    with open(args.report, encoding="utf-8") as f:
      report = json.load(f)
    low = under_bar(report, args.bar)
  except (OSError, ValueError) as e:
    print(f"coverage_bar: cannot read {args.report}: {e}", file=sys.stderr)
    return 2
  public = sum(1 for path in report["files"] if is_public(path))
  if not low:
    print(f"All {public} public modules reach {args.bar:g}%.")
    return 0
  print(f"{len(low)} of {public} public modules under {args.bar:g}%:")
  for path, percent in low:
    print(f"  {path} {percent:.2f}%")
  return 1


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
