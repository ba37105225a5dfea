r"""SIGTERM at random moments, many times: every time a save at the step reached.

  PYTHONPATH=. python tools/preemption_stress.py [--runs=20] [--cluster_runs=20]

Per engine (function, graph): runs tests/preemption_program.py `--runs`
times on one model_dir, each signalled with SIGTERM a random 0-3 s after
its first save, and checks: exit code 143, the state file names a
checkpoint at the step the run reached (its saving listener's end() saw
it), the lock is free, and the next run starts at that step from the saved
values. Then `--cluster_runs` times a parameter-server cluster of the
binary (`--local_cluster=worker:2,ps:1 --strategy=parameter_server`, the
demo model) whose chief gets SIGTERM 0-2 s after its first save: the
launcher exits 143, the newest
checkpoint is the chief's last step, the lock is free, and the next run's
first save is at that step (it resumed there). Prints one line per run and
a summary; exits 1 if any check failed.
"""

import argparse
import fcntl
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
LOCK_FILE = ".training.lock"


def _lock_is_free(model_dir: str) -> bool:
  with open(os.path.join(model_dir, LOCK_FILE), "a") as f:
    try:
      fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
      return False
    fcntl.flock(f, fcntl.LOCK_UN)
  return True


def _newest_step(model_dir: str) -> int:
  path = tf.train.latest_checkpoint(model_dir)
  return -1 if path is None else int(path.rsplit("-", 1)[1])


def _log(path: str):
  if not os.path.exists(path):
    return []
  with open(path) as f:
    return [line.split() for line in f.read().splitlines()]


def engine_runs(engine: str, runs: int, rng: random.Random) -> list:
  """`runs` signalled runs on one engine; a list of failures."""
  work = tempfile.mkdtemp(prefix=f"preemption_{engine}_")
  model_dir, log = os.path.join(work, "model"), os.path.join(work, "log")
  env = dict(ENV, ESTIMATOR_COMPAT_ENGINE=engine)
  command = [sys.executable, "-m", "tests.preemption_program", model_dir,
             log, "10000000", "slow"]
  failures, last, exits = [], 0, []
  for run in range(runs):
    lines = len(_log(log))
    process = subprocess.Popen(command, cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    while not any(l[0] == "after_save" for l in _log(log)[lines:]):
      if process.poll() is not None:
        failures.append(f"{engine} run {run}: ended before the signal: "
                        f"{process.stderr.read()[-2000:]}")
        return failures
      time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 3.0))
    signalled = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=300)
    exits.append(time.monotonic() - signalled)
    entries = _log(log)[lines:]
    step = int(entries[-1][1]) if entries and entries[-1][0] == "end" else -1
    problems = []
    if process.returncode != 143:
      problems.append(f"exit code {process.returncode}: {err[-1500:]}")
    if ["start", str(last)] not in entries:
      problems.append(f"did not start at {last}: {entries[:3]}")
    if last:
      saved = np.load(f"{log}.{last}.npz")
      for name in saved.files:
        stored = tf.train.load_variable(f"{model_dir}/model.ckpt-{last}",
                                        name.replace("__", "/"))
        if not np.array_equal(saved[name], stored):
          problems.append(f"{name} differs from model.ckpt-{last}")
    # A signal before the first step stops at the restored step (saved by
    # the run's first save).
    if step < last or ["after_save", str(step)] not in entries:
      problems.append(f"no save at the step reached: {entries[-3:]}")
    if _newest_step(model_dir) != step:
      problems.append(f"state file names {_newest_step(model_dir)}, "
                      f"not {step}")
    if not _lock_is_free(model_dir):
      problems.append("lock still held")
    print(f"{engine} run {run}: step {last} -> {step}, exit "
          f"{process.returncode} {exits[-1]:.1f} s after SIGTERM"
          f"{': ' + '; '.join(problems) if problems else ''}", flush=True)
    failures += [f"{engine} run {run}: {p}" for p in problems]
    last = max(last, step)
  print(f"{engine}: {runs} runs, {len(failures)} failures, exit "
        f"{min(exits):.1f}-{max(exits):.1f} s after SIGTERM, final step "
        f"{last}", flush=True)
  return failures


def _children(pid: int):
  try:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
      return [int(p) for p in f.read().split()]
  except OSError:
    return []


def _chief_of(launcher: int):
  for child in _children(launcher):
    try:
      with open(f"/proc/{child}/environ", "rb") as f:
        environ = f.read()
    except OSError:
      continue
    if re.search(rb'TF_CONFIG=[^\0]*"type": *"chief"', environ):
      return child
  return None


def cluster_runs(runs: int, rng: random.Random) -> list:
  """`runs` signalled parameter-server clusters; a list of failures."""
  work = tempfile.mkdtemp(prefix="preemption_cluster_")
  model_dir = os.path.join(work, "model")
  command = [sys.executable, "-m", "estimator_compat.train",
             "--local_cluster=worker:2,ps:1", "--strategy=parameter_server",
             f"--model_dir={model_dir}",
             "--train_steps=100000000", "--save_checkpoints_steps=100000000",
             "--log_step_count_steps=100000"]
  failures, last = [], 0
  for run in range(runs):
    out_path = os.path.join(work, f"out{run}")
    with open(out_path, "w") as out:
      launcher = subprocess.Popen(command, cwd=ROOT, env=ENV, stdout=out,
                                  stderr=subprocess.STDOUT)
      chief = None
      while _newest_step(model_dir) < 0 or not re.search(
          r"\[chief\].*Saving checkpoints for", open(out_path).read()):
        if launcher.poll() is not None:
          break
        time.sleep(0.1)
      time.sleep(rng.uniform(0.0, 2.0))
      chief = _chief_of(launcher.pid)
      if chief is None:
        failures.append(f"cluster run {run}: no chief found")
        launcher.kill()
        launcher.wait()
        break
      os.kill(chief, signal.SIGTERM)
      code = launcher.wait(timeout=300)
    text = open(out_path).read()
    saves = [int(s) for s in re.findall(
        r"\[chief\].*Saving checkpoints for (\d+) into", text)]
    problems = []
    if code != 143:
      problems.append(f"launcher exit code {code}")
    if not saves or saves[0] != last:
      problems.append(f"first save {saves[:1]}, not at {last}")
    step = saves[-1] if saves else -1
    if step < last or _newest_step(model_dir) != step:
      problems.append(f"last save {step}, state file "
                      f"{_newest_step(model_dir)}")
    if not _lock_is_free(model_dir):
      problems.append("lock still held")
    print(f"cluster run {run}: step {last} -> {step}, launcher exit {code}"
          f"{': ' + '; '.join(problems) if problems else ''}", flush=True)
    failures += [f"cluster run {run}: {p}" for p in problems]
    last = max(last, step)
  print(f"cluster: {runs} runs, {len(failures)} failures, final step {last}",
        flush=True)
  return failures


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--runs", type=int, default=20)
  parser.add_argument("--cluster_runs", type=int, default=20)
  parser.add_argument("--engines", default="function,graph")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  rng = random.Random(args.seed)
  failures = []
  for engine in filter(None, args.engines.split(",")):
    failures += engine_runs(engine, args.runs, rng)
  if args.cluster_runs:
    failures += cluster_runs(args.cluster_runs, rng)
  for failure in failures:
    print("FAILED", failure)
  return 1 if failures else 0


if __name__ == "__main__":
  sys.exit(main())
