"""Runs an unchanged legacy program after `estimator_compat.install()`.

  python -m estimator_compat PROGRAM.py [ARGS...]
  python -m estimator_compat -m pkg.module [ARGS...]
  estimator-compat-run PROGRAM.py [ARGS...]

As `python -m pdb` and `coverage run` do: the program runs as `__main__`,
with `sys.argv` its own command line (`sys.argv[0]` the program),
`sys.path[0]` its directory (the current directory for `-m`), exceptions
printed without the launcher's frames and its exit code propagated (an
uncaught exception exits 1, `sys.exit(n)` and absl's `app.run` exit n).
The distribution flags `install()` reads (`--strategy`, `--local_cluster`,
...) go after the program, among its own arguments.
"""

import builtins
import importlib.machinery
import importlib.util
import io
import os
import runpy
import sys
import types
import zipfile
from typing import List, Optional, Sequence

USAGE = """\
usage: python -m estimator_compat PROGRAM.py [ARGS...]
       python -m estimator_compat -m MODULE [ARGS...]
       estimator-compat-run PROGRAM.py [ARGS...]

Runs a legacy tf.estimator program unchanged: calls estimator_compat.install()
(tf.estimator and `import tensorflow_estimator` resolve to estimator_compat),
then runs PROGRAM.py (or MODULE, as `python -m` would) as __main__ with ARGS,
its sys.argv[0] being the program. Its exit code is the program's.
Distribution flags (--strategy, --local_cluster, ...) go among ARGS.

Other ways to turn it on without editing the program:
  ESTIMATOR_COMPAT_AUTO=1   in the environment: every Python process
  %load_ext estimator_compat   in IPython or Jupyter
"""

_NAME = "estimator-compat-run"


class UsageError(Exception):
  """The launcher's own command line is wrong (exit code 2)."""


def parse(argv: Sequence[str]) -> Optional[tuple]:
  """Splits the launcher's arguments.

  Args:
    argv: the arguments after the launcher itself.

  Returns:
    None for --help, else (kind, target, program_args) where kind is "path"
    or "module".

  Raises:
    UsageError: no program, or an option the launcher does not know.
  """
  if not argv:
    raise UsageError("no program given: name PROGRAM.py or -m MODULE.")
  first = argv[0]
  if first in ("-h", "--help"):
    return None
  if first == "-m":
    if len(argv) < 2:
      raise UsageError("-m needs a module name, e.g. -m pkg.train.")
    return "module", argv[1], list(argv[2:])
  if first.startswith("-m") and len(first) > 2:
    return "module", first[2:], list(argv[1:])
  if first == "--":  # What follows is the program, whatever its name.
    if len(argv) < 2:
      raise UsageError("no program given after --.")
    return "path", argv[1], list(argv[2:])
  if first.startswith("-"):
    raise UsageError(
        f"unknown option {first!r}: the launcher takes only -m MODULE or "
        "PROGRAM.py; the program's own options go after it.")
  return "path", first, list(argv[1:])


def _trimmed(tb: Optional[types.TracebackType],
             skip: Sequence[str]) -> Optional[types.TracebackType]:
  """tb without its leading frames from the files in skip (ours, runpy)."""
  while tb is not None and tb.tb_frame.f_code.co_filename in skip:
    tb = tb.tb_next
  return tb


def _our_files() -> List[str]:
  """Where the frames above the program's come from (runpy's for -m)."""
  files = [__file__, runpy.__file__, "<frozen runpy>"]
  return [os.path.abspath(f) for f in files[:2]] + files


def _compiled(path: str) -> types.CodeType:
  """The script's code, compiled as `python PROGRAM.py` would."""
  with io.open_code(path) as f:
    source = f.read()
  return compile(source, path, "exec", dont_inherit=True)


def _run_code(code: types.CodeType, path: str) -> None:
  """Runs a script's code as `python PROGRAM.py` does.

  Unlike runpy.run_path, `sys.argv[0]` stays as the user typed it, and the
  program's module stays `sys.modules["__main__"]` (pickling, atexit).
  """
  module = types.ModuleType("__main__")
  module.__dict__.update(
      __file__=path, __builtins__=builtins, __cached__=None, __package__=None,
      __spec__=None,
      __loader__=importlib.machinery.SourceFileLoader("__main__", path))
  sys.modules["__main__"] = module
  exec(code, module.__dict__)  # pylint: disable=exec-used


def _set_path0(directory: str) -> None:
  """sys.path[0] as Python sets it for the program (none under -P)."""
  # -P (sys.flags.safe_path) came with Python 3.11; 3.10 has no such flag.
  if not getattr(sys.flags, "safe_path", False):
    sys.path[0] = directory


def _run(kind: str, target: str, args: List[str]) -> None:
  """install(), then runs the program as __main__ (may raise anything).

  Raises:
    UsageError: the program or module does not exist.
  """
  code = None
  if kind == "path":
    path = os.path.abspath(target)
    if not os.path.exists(path):
      raise UsageError(
          f"can't open file {path!r}: [Errno 2] No such file or directory")
    if os.path.isfile(path) and not zipfile.is_zipfile(path):
      code = _compiled(path)  # A SyntaxError comes before TensorFlow loads.
    _set_path0(os.path.dirname(path))
  else:
    _set_path0(os.getcwd())
    try:
      found = importlib.util.find_spec(target) is not None
    except ImportError as e:
      raise UsageError(f"Error while finding module specification for "
                       f"{target!r} ({type(e).__name__}: {e})") from None
    if not found:
      raise UsageError(f"No module named {target}")
  sys.argv = [target] + args
  import estimator_compat  # pylint: disable=g-import-not-at-top
  estimator_compat.install()  # May remove distribution flags from sys.argv.
  if code is not None:
    _run_code(code, path)
  elif kind == "path":  # A directory or zip file with a __main__.py.
    runpy.run_path(target, run_name="__main__")
  else:
    runpy.run_module(target, run_name="__main__", alter_sys=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
  """The launcher; returns the exit code (SystemExit from the program passes).

  Args:
    argv: the launcher's arguments (default: sys.argv[1:]).
  """
  argv = sys.argv[1:] if argv is None else list(argv)
  try:
    parsed = parse(argv)
  except UsageError as e:
    sys.stderr.write(f"{USAGE}\n{_NAME}: error: {e}\n")
    return 2
  if parsed is None:
    sys.stdout.write(USAGE)
    return 0
  kind, target, args = parsed
  try:
    _run(kind, target, args)
  except UsageError as e:
    sys.stderr.write(f"{_NAME}: {e}\n")
    return 2 if kind == "path" else 1
  except (SystemExit, KeyboardInterrupt):
    raise
  except BaseException as e:  # pylint: disable=broad-except
    # As Python prints an uncaught exception, from the program's frames on.
    # The default hook prints e.__traceback__, whatever tb it is given.
    tb = _trimmed(e.__traceback__, _our_files())
    sys.excepthook(type(e), e.with_traceback(tb), tb)
    return 1
  return 0


def run() -> None:
  """The `estimator-compat-run` console script."""
  sys.exit(main())
