"""`python -m migration run-both PROGRAM.py [ARGS...] --old-python PATH`.

Runs an unchanged legacy program twice, on the real Estimator (a TF <= 2.15
interpreter with tensorflow-estimator) and here (estimator_compat), each
side in its own folder (`{workdir}` in ARGS becomes WORKDIR/old or
WORKDIR/new), the new side starting from the old side's first checkpoint;
then diffs every model_dir (`migration diff`) and the metric lines printed
(`migration.printed_metrics`). Exits 0 when nothing differs, 1 when
something does, 2 on bad arguments or when the old side fails.

Options go before PROGRAM, or anywhere after it unless a `--` comes first:
after `--` every argument is the program's.
"""

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from migration import run_both_sides as sides
from migration.diff import cli as diff_cli

DEFAULT_OLD_PYTHON = os.path.expanduser(
    "~/.cache/estimator-compat/tf215-venv/bin/python")
OLD_PYTHON_ENV = "ESTIMATOR_COMPAT_OLD_PYTHON"
USAGE = ("python -m migration run-both [OPTIONS] (PROGRAM.py | -m MODULE) "
         "[ARGS...] [--old-python PATH] [--workdir DIR] [--rtol R] [--atol A] "
         "[--json] [--keep] [--rerun-old] [--engine function|graph]")


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="python -m migration run-both", usage=USAGE,
      description=__doc__.split("\n\n")[1].replace("\n", " "))
  parser.add_argument("--old-python", metavar="PATH",
                      help="a TF <= 2.15 interpreter with tensorflow-"
                      f"estimator (default: ${OLD_PYTHON_ENV}, else "
                      f"{DEFAULT_OLD_PYTHON})")
  parser.add_argument("--workdir", metavar="DIR", help="where both sides "
                      "run (WORKDIR/old, WORKDIR/new; must be new or empty; "
                      "kept). Default: a temporary folder, removed unless "
                      "--keep")
  diff_cli.add_tolerance_flags(parser)
  parser.add_argument("--json", action="store_true",
                      help="print the result as JSON instead of tables")
  parser.add_argument("--keep", action="store_true",
                      help="keep the temporary workdir")
  parser.add_argument("--engine", choices=("function", "graph"),
                      help="the new side's engine (default: "
                      "estimator_compat's default)")
  parser.add_argument("--rerun-old", action="store_true",
                      help="also rerun the old side from the same first "
                      "checkpoint; differences that two real-Estimator runs "
                      "show too are listed apart and not counted")
  parser.add_argument("--timeout", type=float, metavar="SECONDS",
                      help="stop a side that runs longer")
  return parser


_VALUED = ("--old-python", "--workdir", "--rtol", "--atol", "--examples",
           "--ignore", "--engine", "--timeout")
_SWITCHES = ("--json", "--keep", "--rerun-old", "-h", "--help")


def split_argv(argv: Sequence[str]) -> Tuple[List[str], Optional[
    sides.Program]]:
  """Splits run-both's own options from the program and its arguments.

  Args:
    argv: the arguments after `run-both`.

  Returns:
    (run-both's options, the Program or None when none was named).
  """
  ours, program_args, target, is_module = [], [], None, False
  i, passthrough = 0, False
  while i < len(argv):
    arg = argv[i]
    name = arg.split("=", 1)[0]
    if passthrough:
      program_args.append(arg)
    elif target is not None and arg == "--":
      passthrough = True
    elif name in _VALUED:
      ours.append(arg)
      if "=" not in arg and i + 1 < len(argv):
        ours.append(argv[i + 1])
        i += 1
    elif arg in _SWITCHES:
      ours.append(arg)
    elif target is None and arg == "-m" and i + 1 < len(argv):
      target, is_module = argv[i + 1], True
      i += 1
    elif target is None and arg == "--":
      pass
    elif target is None:
      target = arg
    else:
      program_args.append(arg)
    i += 1
  if target is None:
    return ours, None
  return ours, sides.Program(target, is_module, tuple(program_args))


@dataclasses.dataclass(frozen=True)
class RunBothResult:
  """Both runs and every difference between them."""
  old: sides.SideRun
  new: sides.SideRun
  seeded: Tuple[str, ...]
  model_dirs: Dict[str, Any]  # {relative model_dir: ModelDirDiff}
  differences: Tuple[Any, ...]  # run-level Differences (run, printed, ...)
  notes: Tuple[str, ...]
  # (relative model_dir or "" for the run, Difference) also seen between two
  # runs of the real Estimator (with rerun_old).
  explained: Tuple[Tuple[str, Any], ...] = ()
  rerun_ok: Optional[bool] = None  # None: no rerun

  @property
  def ok(self) -> bool:
    return not self.differences and all(d.ok for d in
                                        self.model_dirs.values())

  def to_json(self) -> Dict[str, Any]:
    side = lambda r: {"command": r.command, "returncode": r.returncode,
                      "workdir": r.workdir}
    return {"ok": self.ok, "old": side(self.old), "new": side(self.new),
            "seeded_first_checkpoints": list(self.seeded),
            "model_dirs": {k: v.to_json() for k, v in self.model_dirs.items()},
            "differences": [d.to_json() for d in self.differences],
            "old_rerun_same": self.rerun_ok,
            "explained_by_old_rerun": [dict(d.to_json(), model_dir=rel)
                                       for rel, d in self.explained],
            "notes": list(self.notes)}

  def format_table(self) -> str:
    lines = [f"old: {' '.join(self.old.command[:1] + self.old.command[4:])} "
             f"(exit {self.old.returncode})",
             f"new: {' '.join(self.new.command[:1] + self.new.command[4:])} "
             f"(exit {self.new.returncode}, estimator_compat)",
             "new side started from the old side's first checkpoint in: "
             f"{', '.join(self.seeded) or '(none saved)'}", ""]
    for rel, diff in self.model_dirs.items():
      lines.append(f"== model_dir {rel}")
      lines.append(diff.format_table())
    lines.append("== program output (metric lines)")
    for d in self.differences:
      lines.append(f"{d.kind:<8}  {d.where:<30}  {d.detail}")
    if not self.differences:
      lines.append("SAME: the same metric lines.")
    if self.rerun_ok is not None:
      lines.append("== old side rerun from the same checkpoint: " + (
          "same as its first run" if self.rerun_ok else
          f"differs; {len(self.explained)} old-vs-new differences are also "
          "there (not counted):"))
      for rel, d in self.explained:
        lines.append(f"  {d.kind:<16}  {rel + ': ' if rel else ''}{d.where}")
    lines.extend(f"note: {n}" for n in self.notes)
    lines.append("")
    if self.ok:
      lines.append("PASSED: no differences beyond those between two runs of "
                   "the real Estimator." if self.explained else
                   "PASSED: no differences.")
    else:
      lines.append("DIFFERENT: see the differences above.")
    return "\n".join(lines) + "\n"


def _tail(text: str, lines: int = 15) -> str:
  return "\n".join(text.rstrip().splitlines()[-lines:])


def run_both(program: sides.Program, old_python: str, workdir: str, *,
             rtol: float = 0.0, atol: float = 0.0, examples=None,
             ignore: Sequence[str] = (), engine: Optional[str] = None,
             timeout: Optional[float] = None,
             rerun_old: bool = False) -> RunBothResult:
  """Runs `program` on both sides in `workdir` and diffs the results.

  Args:
    program: the program and its arguments (`{workdir}` replaced per side).
    old_python: a TF <= 2.15 interpreter with tensorflow-estimator.
    workdir: an empty or new folder; gets old/, new/, ckpt0/ and each
      side's stdout/stderr.
    rtol: relative tolerance for float values.
    atol: absolute tolerance for float values.
    examples: inputs for the exports' signatures (see diff_model_dirs).
    ignore: patterns of differences to leave out (see diff_model_dirs).
    engine: the new side's engine (None: estimator_compat's default).
    timeout: seconds each side may run.
    rerun_old: also rerun the old side from the same first checkpoint;
      old-vs-new differences that old-vs-rerun shows too (the program's own
      nondeterminism) are listed apart (`explained`) and do not count.

  Returns:
    A RunBothResult.

  Raises:
    RuntimeError: the old side failed (nothing to compare with).
  """
  from migration.diff.result import Difference  # pylint: disable=g-import-not-at-top
  old_dir, new_dir = (os.path.join(workdir, s) for s in ("old", "new"))
  ckpt0 = os.path.join(workdir, "ckpt0")
  old = sides.run_old(program, old_python, old_dir, ckpt0, timeout)
  if old.returncode != 0:
    raise RuntimeError(f"the old side failed (exit {old.returncode}), so "
                       "there is nothing to compare with:\n" +
                       _tail(old.stderr))
  seeded = tuple(sides.seed_first_checkpoints(ckpt0, new_dir))
  new = sides.run_new(program, new_dir, engine, timeout)
  settings = dict(rtol=rtol, atol=atol, examples=examples, ignore=ignore)
  diffs, differences = _compare_sides(old, new, **settings)
  notes, explained, rerun_ok = [], [], None
  if new.returncode != 0:
    differences.insert(0, Difference(
        "run", "new side", f"exit {new.returncode} where the old side "
        f"exited 0:\n{_tail(new.stderr)}"))
  if not seeded:
    notes.append("the old side saved no model.ckpt-0 under the workdir "
                 "(pass --model_dir={workdir}/...), so the new side started "
                 "from its own initialization")
  if rerun_old:
    rerun_dir = os.path.join(workdir, "old_rerun")
    sides.seed_first_checkpoints(ckpt0, rerun_dir)
    rerun = sides.run_old(program, old_python, rerun_dir,
                          os.path.join(workdir, "ckpt0_rerun"), timeout,
                          name="old_rerun")
    rerun_diffs, rerun_differences = _compare_sides(old, rerun, **settings)
    noise = {(rel, d.kind, d.where) for rel, diff in rerun_diffs.items()
             for d in diff.differences}
    noise |= {("", d.kind, d.where) for d in rerun_differences}
    rerun_ok = not noise and rerun.returncode == 0
    for rel, diff in list(diffs.items()):
      kept = tuple(d for d in diff.differences
                   if (rel, d.kind, d.where) not in noise)
      explained.extend((rel, d) for d in diff.differences if d not in kept)
      diffs[rel] = dataclasses.replace(diff, differences=kept)
    explained.extend(("", d) for d in differences
                     if ("", d.kind, d.where) in noise)
    differences = [d for d in differences
                   if ("", d.kind, d.where) not in noise]
    if not rerun_ok:
      notes.append(
          f"the real Estimator rerun from the same checkpoint differs from "
          f"its first run in {len(noise)} places: the program is not "
          "deterministic there (e.g. an unseeded shuffle); old-vs-new "
          "differences at those places are listed apart and not counted")
  return RunBothResult(old, new, seeded, diffs, tuple(differences),
                       tuple(notes), tuple(explained), rerun_ok)


def _compare_sides(old: sides.SideRun, new: sides.SideRun, **settings):
  """({relative model_dir: ModelDirDiff}, run-level differences)."""
  from migration import printed_metrics  # pylint: disable=g-import-not-at-top
  from migration.diff import compare  # pylint: disable=g-import-not-at-top
  from migration.diff.result import Difference  # pylint: disable=g-import-not-at-top
  diffs, differences = {}, []
  old_dirs = sides.model_dirs(old.workdir)
  new_dirs = sides.model_dirs(new.workdir)
  for rel in sorted(set(old_dirs) ^ set(new_dirs)):
    side = "old" if rel in old_dirs else "new"
    differences.append(Difference("run", rel,
                                  f"a model_dir on the {side} side only"))
  for rel in sorted(set(old_dirs) & set(new_dirs)):
    diffs[rel] = compare.diff_model_dirs(
        os.path.join(old.workdir, rel), os.path.join(new.workdir, rel),
        **settings)
  differences.extend(
      d for d in printed_metrics.compare(old.stdout, new.stdout,
                                         settings["rtol"], settings["atol"])
      if not compare.ignored(d, settings["ignore"]))
  return diffs, differences


def main(argv: Optional[Sequence[str]] = None) -> int:
  """Runs both sides and prints the result; returns the exit code."""
  argv = sys.argv[1:] if argv is None else list(argv)
  ours, program = split_argv(argv)
  try:
    args = _parser().parse_args(ours)
  except SystemExit as e:
    return 0 if e.code == 0 else 2
  if program is None:
    print(f"usage: {USAGE}\nerror: name the program (PROGRAM.py or -m "
          "MODULE).", file=sys.stderr)
    return 2
  if not program.is_module and not os.path.isfile(program.target):
    print(f"error: {program.target!r} is not a file. Fix: pass the "
          "program's .py file, or -m package.module.", file=sys.stderr)
    return 2
  old_python = (args.old_python or os.environ.get(OLD_PYTHON_ENV) or
                DEFAULT_OLD_PYTHON)
  problem = sides.old_interpreter_error(old_python)
  if problem:
    print(f"error: {problem}", file=sys.stderr)
    return 2
  if args.workdir:
    workdir = args.workdir
    if os.path.exists(workdir) and os.listdir(workdir):
      print(f"error: --workdir {workdir!r} is not empty. Fix: name a new "
            "or empty folder.", file=sys.stderr)
      return 2
    os.makedirs(workdir, exist_ok=True)
  else:
    workdir = tempfile.mkdtemp(prefix="run_both_")
  from migration.diff import compare  # pylint: disable=g-import-not-at-top
  from migration.diff import events  # pylint: disable=g-import-not-at-top
  try:
    result = run_both(program, old_python, workdir, rtol=args.rtol,
                      atol=args.atol, examples=args.examples,
                      ignore=tuple(args.ignore), engine=args.engine,
                      timeout=args.timeout, rerun_old=args.rerun_old)
  except (RuntimeError, compare.DiffError) as e:
    print(f"error: {e}\n(workdir: {workdir})", file=sys.stderr)
    return 2
  for rel in result.model_dirs:
    events.write_overlay(os.path.join(workdir, "old", rel),
                         os.path.join(workdir, "new", rel),
                         os.path.join(workdir, "tensorboard", rel))
  if args.json:
    print(json.dumps(result.to_json(), indent=1))
  else:
    sys.stdout.write(result.format_table())
  if args.workdir or args.keep:
    print(f"workdir: {workdir} (event overlay: tensorboard --logdir "
          f"{os.path.join(workdir, 'tensorboard')})", file=sys.stderr)
  else:
    shutil.rmtree(workdir, ignore_errors=True)
  return 0 if result.ok else 1


def run(argv: Optional[List[str]] = None) -> None:
  sys.exit(main(sys.argv[1:] if argv is None else argv))
