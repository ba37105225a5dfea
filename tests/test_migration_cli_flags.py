"""`python -m migration` refuses bad flags with exit 2 and the fix.

Each case stops before a model is built: the tolerances, record's --out,
and a --new that is neither an engine nor a rewrite (migration/__main__.py).
The runs themselves are tests/test_migration_cli.py.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = ["--model_fn=tests.planted_program:model_fn",
           "--input_fn=tests.planted_program:input_fn"]


def _run(args, cwd):
  return subprocess.run([sys.executable, "-m", "migration"] + args, cwd=cwd,
                        capture_output=True, text=True, timeout=600,
                        check=False, env=dict(os.environ, PYTHONPATH=ROOT))


@pytest.mark.parametrize("args,message", [
    (["check", "--tolerance=speed=1e-4,1e-5"] + PROGRAM,
     "error: --tolerance=speed=1e-4,1e-5 is not CHECK=RTOL,ATOL with CHECK "
     "in ["),
    (["check", "--tolerance=trajectory=1e-4"] + PROGRAM,
     "error: --tolerance=trajectory=1e-4 is not CHECK=RTOL,ATOL"),
    (["check", "--tolerance=trajectory=small,1e-5"] + PROGRAM,
     "error: --tolerance=trajectory=small,1e-5: could not convert string to "
     "float: 'small'"),
    (["check", "--new=function2"] + PROGRAM,
     "error: --new=function2 is neither an engine (function, graph) nor a "
     "rewrite. Fix: --new=pkg.mod:rewrite."),
    (["record"] + PROGRAM,
     "error: --out is required for record. Fix: --out=DIR, a new directory "
     "for the golden."),
])
def test_bad_flags_exit_2_before_anything_runs(tmp_path, args, message):
  done = _run(args, cwd=tmp_path)
  assert done.returncode == 2, done.stderr[-2000:]
  assert message in done.stderr
  # Nothing was written: no report, no recording.
  assert os.listdir(tmp_path) == []
