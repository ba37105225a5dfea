"""The command line of `python -m migration diff OLD_MODEL_DIR NEW_MODEL_DIR`."""

import argparse
import json
import sys
from typing import List, Optional, Sequence

USAGE = ("python -m migration diff OLD_MODEL_DIR NEW_MODEL_DIR [--rtol R] "
         "[--atol A] [--json] [--examples FILE.npz] [--ignore PATTERN] "
         "[--tensorboard DIR]")


def add_tolerance_flags(parser: argparse.ArgumentParser) -> None:
  """--rtol, --atol, --examples, --ignore (shared with run-both)."""
  parser.add_argument("--rtol", type=float, default=0.0,
                      help="relative tolerance for float values (default 0: "
                      "exact); integers are always exact")
  parser.add_argument("--atol", type=float, default=0.0,
                      help="absolute tolerance for float values (default 0)")
  parser.add_argument("--examples", metavar="FILE.npz",
                      help="inputs for the exports' signatures, one array "
                      "per input key (default: built from each signature)")
  parser.add_argument("--ignore", action="append", default=[],
                      metavar="PATTERN", help="leave out differences whose "
                      "kind, where or kind:where matches this fnmatch "
                      "pattern (repeatable), e.g. --ignore=layout")


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="python -m migration diff", usage=USAGE,
      description=(
          "Compares everything an Estimator leaves in two model_dirs, "
          "whichever side wrote them (the real Estimator or "
          "estimator_compat): checkpoints, variables, events, evaluation "
          "results, exports and their outputs, file layout. Exits 0 when "
          "there is no difference, 1 when there is one, 2 on bad arguments "
          "or unreadable model_dirs."))
  parser.add_argument("old", metavar="OLD_MODEL_DIR")
  parser.add_argument("new", metavar="NEW_MODEL_DIR")
  add_tolerance_flags(parser)
  parser.add_argument("--json", action="store_true",
                      help="print the result as JSON instead of the table")
  parser.add_argument("--tensorboard", metavar="DIR",
                      help="copy both sides' event files to DIR/old and "
                      "DIR/new: `tensorboard --logdir DIR` overlays them")
  return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
  """Runs the diff; returns the exit code (0 same, 1 different, 2 error)."""
  try:
    args = _parser().parse_args(argv)
  except SystemExit as e:
    return 0 if e.code == 0 else 2
  from migration.diff import compare  # pylint: disable=g-import-not-at-top
  from migration.diff import events  # pylint: disable=g-import-not-at-top
  try:
    result = compare.diff_model_dirs(
        args.old, args.new, rtol=args.rtol, atol=args.atol,
        examples=args.examples, ignore=tuple(args.ignore))
  except compare.DiffError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  if args.tensorboard:
    events.write_overlay(args.old, args.new, args.tensorboard)
  if args.json:
    print(json.dumps(result.to_json(), indent=1))
  else:
    sys.stdout.write(result.format_table())
    if args.tensorboard:
      print(f"event overlay: tensorboard --logdir {args.tensorboard}")
  return 0 if result.ok else 1


def run(argv: Optional[List[str]] = None) -> None:
  sys.exit(main(sys.argv[1:] if argv is None else argv))
