"""The command line of `python -m migration scan`."""

import argparse
import sys
from typing import List, Optional, Sequence

from migration.scan import fixer
from migration.scan import report
from migration.scan import scanner

USAGE = "python -m migration scan PATH... [--json FILE] [--fix | --write]"


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="python -m migration scan", usage=USAGE,
      description=(
          "Lists, per file and line, what a codebase uses of tf.estimator, "
          "tf.compat.v1.estimator, tensorflow_estimator and the TF1 APIs "
          "Estimator programs use, and whether each runs on "
          "estimator_compat: supported, differs, unsupported or "
          "tf-removed. Exits 0 when nothing is unsupported or tf-removed "
          "and every file parses, 1 otherwise, 2 on bad arguments."))
  parser.add_argument("paths", nargs="+", metavar="PATH",
                      help=".py files, notebooks, or directories to walk")
  parser.add_argument("--json", metavar="FILE",
                      help="also write the findings and summary as JSON "
                      "('-' for stdout, instead of the text report)")
  mode = parser.add_mutually_exclusive_group()
  mode.add_argument("--fix", action="store_true",
                    help="print the edits as a unified diff (changes "
                    "nothing)")
  mode.add_argument("--write", action="store_true",
                    help="apply the edits, then report on the files as "
                    "written")
  return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
  """Runs the scan; returns the exit code (0, 1, or 2 on bad arguments)."""
  try:
    args = _parser().parse_args(argv)
  except SystemExit as e:
    return 0 if e.code == 0 else 2
  try:
    result = scanner.scan(args.paths)
  except FileNotFoundError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  if args.fix or args.write:
    file_fixes = fixer.fixes(result)
    for fixed in file_fixes:
      for message in fixed.messages:
        print(message, file=sys.stderr)
    if args.fix:
      sys.stdout.write(fixer.unified_diff(file_fixes))
      return report.exit_code(result)
    for path in fixer.write(file_fixes):
      print(f"rewrote {path}", file=sys.stderr)
    result = scanner.scan(args.paths)
  if args.json:
    document = report.to_json(result)
    if args.json == "-":
      sys.stdout.write(document)
      return report.exit_code(result)
    with open(args.json, "w", encoding="utf-8") as f:
      f.write(document)
  sys.stdout.write(report.text(result))
  return report.exit_code(result)


def run(argv: Optional[List[str]] = None) -> None:
  sys.exit(main(sys.argv[1:] if argv is None else argv))
