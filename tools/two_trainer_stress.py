r"""Two trainers started together on one model_dir, many times, big checkpoints.

  PYTHONPATH=. python tools/two_trainer_stress.py [--runs=20] [--hidden=1300000]
      [--engine=function] [--steps=3]

Each run starts two copies of the same trainer at once on the same
model_dir (the tests' classifier, `--hidden` units wide: 1.3M gives 36 MB
checkpoints), each saving every step and training `--steps` past what the
model_dir holds. Checks per run: exactly one trainer finishes, at its
max_steps; the other is refused with ModelDirInUseError and the fix (or,
started after the first ended, finds max_steps reached and trains
nothing); every checkpoint the state file keeps has all its files and
reads back; no lock is left. Then a trainer is held inside its first step
while a second one is refused: the model_dir is byte-for-byte what it was
before the refused one started. Prints one line per run and a summary;
exits 1 if any check failed. (issue 28's acceptance run; not part of CI.)
"""

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
LOCK_FILE = ".training.lock"


def _trainer(model_dir: str, max_steps: int, hidden: int, engine: str,
             marker: str) -> None:
  """One trainer (run in a child process of this tool)."""
  sys.path.insert(0, ROOT)
  import estimator_compat as tfe  # pylint: disable=g-import-not-at-top
  from tests import models  # pylint: disable=g-import-not-at-top

  class _Hold(tfe.SessionRunHook):

    def before_run(self, run_context):
      with open(marker, "w", encoding="utf-8") as f:
        f.write("holding")
      time.sleep(600)

  est = models.estimator(model_dir, params={"hidden": hidden}, engine=engine,
                         save_checkpoints_steps=1, keep_checkpoint_max=3,
                         log_step_count_steps=None, save_summary_steps=None)
  est.train(models.input_fn(), max_steps=max_steps,
            hooks=[_Hold()] if marker else None)
  print("FINAL", est.latest_checkpoint(), flush=True)


def _command(model_dir, max_steps, args, marker=""):
  return [sys.executable, os.path.abspath(__file__), "--trainer", model_dir,
          str(max_steps), str(args.hidden), args.engine, marker]


def _digest(model_dir: str) -> dict:
  out = {}
  for name in sorted(os.listdir(model_dir)):
    path = os.path.join(model_dir, name)
    if os.path.isfile(path):
      with open(path, "rb") as f:
        out[name] = hashlib.sha256(f.read()).hexdigest()
  return out


def _checkpoints_intact(model_dir: str):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from estimator_compat.checkpoints import checkpoint_files  # pylint: disable=g-import-not-at-top
  state = tf.train.get_checkpoint_state(model_dir)
  problems = []
  for kept in state.all_model_checkpoint_paths:
    missing = checkpoint_files.missing_files(kept)
    if missing:
      problems.append(f"{kept} misses {missing}")
      continue
    try:
      reader = tf.train.load_checkpoint(kept)
      for name in reader.get_variable_to_shape_map():
        reader.get_tensor(name)
    except Exception as error:  # pylint: disable=broad-except
      problems.append(f"{kept} unreadable: {error}")
  return state, problems


def _run_pair(model_dir: str, step: int, args) -> tuple:
  max_steps = step + args.steps
  runs = [subprocess.Popen(_command(model_dir, max_steps, args), cwd=ROOT,
                           env=ENV, text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE) for _ in range(2)]
  outputs = [run.communicate(timeout=900) for run in runs]
  codes = [run.returncode for run in runs]
  finished = [out for out, _ in outputs if f"model.ckpt-{max_steps}" in out]
  refused = [err for code, (_, err) in zip(codes, outputs) if code != 0]
  problems = []
  if len(finished) < 1:
    problems.append(f"no trainer finished at {max_steps}: codes {codes}")
  if not (len(refused) == 1 or all(code == 0 for code in codes)):
    problems.append(f"exit codes {codes}")
  for err in refused:
    if "ModelDirInUseError" not in err or "Fix:" not in err:
      problems.append("refused without the error: " + err[-500:])
  state, broken = _checkpoints_intact(model_dir)
  problems += broken
  if not state.model_checkpoint_path.endswith(f"-{max_steps}"):
    problems.append(f"newest is {state.model_checkpoint_path}")
  if os.path.exists(os.path.join(model_dir, LOCK_FILE)):
    problems.append("lock left behind")
  how = "the other refused" if len(refused) == 1 else "the other came late"
  return "; ".join(problems), how


def _refused_touches_nothing(model_dir: str, args) -> str:
  marker = os.path.join(tempfile.mkdtemp(), "holding")
  holder = subprocess.Popen(_command(model_dir, 10**6, args, marker),
                            cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
  try:
    deadline = time.time() + 600
    while not os.path.exists(marker):
      if holder.poll() is not None or time.time() > deadline:
        return "the holding trainer did not start"
      time.sleep(0.2)
    before = _digest(model_dir)
    second = subprocess.run(_command(model_dir, 10**6, args), cwd=ROOT,
                            env=ENV, capture_output=True, text=True,
                            timeout=600, check=False)
    after = _digest(model_dir)
  finally:
    holder.kill()
    holder.wait()
  problems = []
  if second.returncode == 0 or "ModelDirInUseError" not in second.stderr:
    problems.append("the second trainer was not refused")
  if before != after:
    changed = sorted(set(before.items()) ^ set(after.items()))
    problems.append(f"the refused trainer changed {changed}")
  return "; ".join(problems)


def main() -> int:
  if len(sys.argv) > 1 and sys.argv[1] == "--trainer":
    _trainer(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
             sys.argv[6] if len(sys.argv) > 6 else "")
    return 0
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--runs", type=int, default=20)
  parser.add_argument("--hidden", type=int, default=1_300_000)
  parser.add_argument("--engine", default="function")
  parser.add_argument("--steps", type=int, default=3)
  args = parser.parse_args()
  model_dir = tempfile.mkdtemp(prefix="two_trainers_")
  failed = 0
  for run in range(1, args.runs + 1):
    started = time.time()
    problems, how = _run_pair(model_dir, (run - 1) * args.steps, args)
    failed += bool(problems)
    size = sum(os.path.getsize(os.path.join(model_dir, f))
               for f in os.listdir(model_dir)
               if f.startswith(f"model.ckpt-{run * args.steps}."))
    print(f"run {run}: {'FAILED ' + problems if problems else 'ok'}, {how} "
          f"(checkpoint {size / 2**20:.0f} MB, {time.time() - started:.0f} s)",
          flush=True)
  problems = _refused_touches_nothing(model_dir, args)
  failed += bool(problems)
  print(f"refused while held: {'FAILED ' + problems if problems else 'ok'}")
  print(f"{args.runs - failed + 1} of {args.runs + 1} checks passed")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
