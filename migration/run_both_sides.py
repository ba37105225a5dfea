"""Running one program on each side: the real Estimator, and estimator_compat.

The old side runs under a TF <= 2.15 interpreter with tensorflow-estimator;
a bootstrap copies every model.ckpt-0 its Savers write (the Estimator saves
it right after initializing, before the first step: the values it trains
from) to WORKDIR/ckpt0/. The new side gets those copies in its own
model_dirs before it starts, so it restores them and trains from the same
values; it runs under this interpreter with estimator_compat.install() done
before the program runs as __main__.
"""

import dataclasses
import importlib.util
import os
import shutil
import subprocess
import sys
from typing import Dict, List, Optional, Sequence

FIRST_CHECKPOINT = "model.ckpt-0"
WORKDIR_MARK = "{workdir}"

# Runs on the old interpreter: wraps Saver.save to copy every checkpoint saved
# at step 0 to $RUN_BOTH_CKPT0/<its directory relative to $RUN_BOTH_WORKDIR>.
_OLD_BOOTSTRAP = r"""
import glob, importlib.util, os, runpy, shutil, sys
# estimator_compat sets TF_USE_LEGACY_KERAS=1 here; TF 2.15 then needs tf_keras.
if not importlib.util.find_spec("tf_keras"):
  os.environ.pop("TF_USE_LEGACY_KERAS", None)
from tensorflow.python.training import saver as _saver_lib
_save = _saver_lib.Saver.save
def _copying_save(self, sess, save_path, *args, **kwargs):
  path = _save(self, sess, save_path, *args, **kwargs)
  if isinstance(path, bytes):
    path = path.decode()
  if path and path.endswith("-0"):
    root = os.environ["RUN_BOTH_WORKDIR"]
    rel = os.path.relpath(os.path.dirname(os.path.abspath(path)), root)
    target = os.path.join(os.environ["RUN_BOTH_CKPT0"], rel)
    if not rel.startswith("..") and not os.path.exists(
        os.path.join(target, os.path.basename(path) + ".index")):
      os.makedirs(target, exist_ok=True)
      for part in glob.glob(glob.escape(path) + ".*"):
        if not part.endswith(".meta"):
          shutil.copy(part, target)
  return path
_saver_lib.Saver.save = _copying_save
"""

# Runs on this interpreter: estimator_compat.install(), then the program.
_NEW_BOOTSTRAP = r"""
import os, runpy, sys
import estimator_compat
"""

_RUN_PROGRAM = r"""
mode, target = sys.argv[1], sys.argv[2]
sys.argv = [target] + sys.argv[3:]
{install}
if mode == "path":
  sys.path[0] = os.path.dirname(os.path.abspath(target))
  runpy.run_path(target, run_name="__main__")
else:
  sys.path[0] = os.getcwd()
  runpy.run_module(target, run_name="__main__", alter_sys=True)
"""


@dataclasses.dataclass(frozen=True)
class Program:
  """What to run: a script path or a module (`-m`), and its arguments."""
  target: str
  is_module: bool
  args: Sequence[str]

  def argv(self, workdir: str) -> List[str]:
    """The bootstrap's arguments, `{workdir}` replaced by this side's."""
    return (["module" if self.is_module else "path", self.target] +
            [a.replace(WORKDIR_MARK, workdir) for a in self.args])


@dataclasses.dataclass(frozen=True)
class SideRun:
  """One side's run: command, exit code, output, model_dir root."""
  name: str
  command: List[str]
  returncode: int
  stdout: str
  stderr: str
  workdir: str


def old_interpreter_error(python: str) -> Optional[str]:
  """None when `python` runs and has tensorflow_estimator, else why not."""
  check = ("import importlib.util, sys; sys.exit(0 if importlib.util."
           "find_spec('tensorflow_estimator') and importlib.util.find_spec("
           "'tensorflow') else 3)")
  try:
    code = subprocess.run([python, "-c", check], check=False,
                          capture_output=True, timeout=120).returncode
  except OSError as e:
    return f"--old-python {python!r} cannot run: {e}"
  if code:
    return (f"--old-python {python!r} has no tensorflow or no "
            "tensorflow_estimator. Fix: point it at a TF <= 2.15 virtualenv "
            "with tensorflow-estimator (e.g. pip install tensorflow==2.15.1 "
            "tensorflow-estimator==2.15.0).")
  return None


def _repo_root() -> str:
  spec = importlib.util.find_spec("estimator_compat")
  if spec is None or not spec.origin:
    raise RuntimeError("estimator_compat is not importable here")
  return os.path.dirname(os.path.dirname(spec.origin))


def _run(name: str, command: List[str], env: Dict[str, str], workdir: str,
         timeout: Optional[float]) -> SideRun:
  os.makedirs(workdir, exist_ok=True)
  try:
    done = subprocess.run(command, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    code, out, err = done.returncode, done.stdout, done.stderr
  except subprocess.TimeoutExpired as e:
    code = -1
    out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
    err = (e.stderr.decode() if isinstance(e.stderr, bytes)
           else e.stderr or "") + f"\n(timed out after {timeout} s)"
  for stream, text in (("stdout", out), ("stderr", err)):
    with open(os.path.join(os.path.dirname(workdir), f"{name}.{stream}"),
              "w", encoding="utf-8") as f:
      f.write(text)
  return SideRun(name, command, code, out, err, workdir)


def run_old(program: Program, python: str, workdir: str, ckpt0_dir: str,
            timeout: Optional[float] = None, name: str = "old") -> SideRun:
  """Runs the program on the real Estimator; copies its ckpt-0s aside."""
  env = dict(os.environ, RUN_BOTH_WORKDIR=os.path.abspath(workdir),
             RUN_BOTH_CKPT0=os.path.abspath(ckpt0_dir))
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  script = _OLD_BOOTSTRAP + _RUN_PROGRAM.format(install="")
  command = [python, "-c", script] + program.argv(os.path.abspath(workdir))
  return _run(name, command, env, workdir, timeout)


def seed_first_checkpoints(ckpt0_dir: str, workdir: str) -> List[str]:
  """Puts the old side's ckpt-0s into the new side's model_dirs.

  Each goes to the same place relative to the side's workdir, with a
  `checkpoint` state file naming only it: the new side restores it and
  trains from step 0, as the old side did from the same values.

  Args:
    ckpt0_dir: where run_old copied them.
    workdir: the new side's workdir.

  Returns:
    The model_dirs seeded, relative to the workdir.
  """
  seeded = []
  for root, _, files in os.walk(ckpt0_dir):
    if FIRST_CHECKPOINT + ".index" not in files:
      continue
    rel = os.path.relpath(root, ckpt0_dir)
    target = os.path.normpath(os.path.join(workdir, rel))
    os.makedirs(target, exist_ok=True)
    for name in files:
      shutil.copy(os.path.join(root, name), target)
    with open(os.path.join(target, "checkpoint"), "w", encoding="utf-8") as f:
      f.write(f'model_checkpoint_path: "{FIRST_CHECKPOINT}"\n'
              f'all_model_checkpoint_paths: "{FIRST_CHECKPOINT}"\n')
    seeded.append(rel)
  return sorted(seeded)


def run_new(program: Program, workdir: str, engine: Optional[str] = None,
            timeout: Optional[float] = None) -> SideRun:
  """Runs the program here through estimator_compat."""
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (_repo_root(), env.get("PYTHONPATH")) if p)
  if engine:
    env["ESTIMATOR_COMPAT_ENGINE"] = engine
  script = _NEW_BOOTSTRAP + _RUN_PROGRAM.format(
      install="estimator_compat.install()")
  command = [sys.executable, "-c", script] + program.argv(
      os.path.abspath(workdir))
  return _run("new", command, env, workdir, timeout)


def model_dirs(workdir: str) -> List[str]:
  """The model_dirs under workdir (relative): directories holding a
  `checkpoint` state file or events, outermost only."""
  found = []
  for root, dirs, files in os.walk(workdir):
    dirs.sort()
    if "checkpoint" in files or any("tfevents" in f for f in files):
      found.append(os.path.relpath(root, workdir))
      dirs[:] = []
  return found
