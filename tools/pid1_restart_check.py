r"""A trainer as pid 1 of a fresh pid namespace, killed, restarted as pid 1.

  PYTHONPATH=. python tools/pid1_restart_check.py [--runs=3]

As a container runtime runs it (Docker, Kubernetes: the trainer is pid 1 and
its restart is pid 1 on the same host again): `unshare --pid --fork
--mount-proc` runs tests/lock_restart_program.py (saves every step); once it
saved step 3 or later it gets kill -9 or SIGTERM, then a new namespace runs
it again for 2 steps. Checks: after SIGTERM the trainer exited 143 with the
lock released and a checkpoint at the step it reached; after kill -9 the
lock is left and the restart takes it over; the restart resumes at the
newest checkpoint (it ends exactly 2 steps later). Needs root (or user
namespaces); prints one line per run and exits 1 if a check failed.
(issue 28's acceptance run; CI runs the kill -9 case once, in
tests/test_model_dir_lock.py.)
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
LOCK_FILE = ".training.lock"


def _children(pid: int):
  with open(f"/proc/{pid}/task/{pid}/children", encoding="utf-8") as f:
    return [int(child) for child in f.read().split()]


def _newest_step(model_dir: str) -> int:
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  path = tf.train.latest_checkpoint(model_dir)
  return int(path.rsplit("-", 1)[1]) if path else -1


def _one(unshare: str, signum: int) -> str:
  model_dir = tempfile.mkdtemp(prefix="pid1_")
  command = [unshare, "--pid", "--fork", "--mount-proc", sys.executable,
             "-m", "tests.lock_restart_program", model_dir]
  first = subprocess.Popen(command + ["100000"], cwd=ROOT, env=ENV,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
  try:
    deadline = time.time() + 300
    while _newest_step(model_dir) < 3:
      if first.poll() is not None or time.time() > deadline:
        return "the first trainer did not reach step 3"
      time.sleep(0.2)
    for child in _children(first.pid):
      os.kill(child, signum)  # The trainer (pid 1 inside), not unshare.
    _, err = first.communicate(timeout=120)
  finally:
    if first.poll() is None:
      first.kill()
      first.wait()
  problems = []
  reached = _newest_step(model_dir)
  locked = os.path.exists(os.path.join(model_dir, LOCK_FILE))
  if signum == signal.SIGTERM:
    if first.returncode != 143:
      problems.append(f"exit {first.returncode}, not 143: {err[-300:]}")
    if locked:
      problems.append("SIGTERM left the lock")
  elif not locked:
    problems.append("kill -9 left no lock (nothing to take over)")
  restarted = subprocess.run(command + ["2"], cwd=ROOT, env=ENV,
                             capture_output=True, text=True, timeout=300,
                             check=False)
  if restarted.returncode != 0:
    problems.append("restart failed: " + restarted.stderr[-500:])
  if signum == signal.SIGKILL and (
      "Taking over the training lock" not in restarted.stderr):
    problems.append("the restart did not say it took the lock over")
  if _newest_step(model_dir) != reached + 2:
    problems.append(f"restart ended at {_newest_step(model_dir)}, not "
                    f"{reached} + 2")
  if os.path.exists(os.path.join(model_dir, LOCK_FILE)):
    problems.append("the restart left the lock")
  shutil.rmtree(model_dir, ignore_errors=True)
  return "; ".join(problems) or f"ok (stopped at step {reached})"


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--runs", type=int, default=3)
  args = parser.parse_args()
  unshare = shutil.which("unshare")
  probe = unshare and subprocess.run(
      [unshare, "--pid", "--fork", "--mount-proc", "true"],
      capture_output=True, check=False)
  if not probe or probe.returncode != 0:
    print("cannot make pid namespaces here (unshare, root): NOT RUN")
    return 1
  failed = 0
  for run in range(1, args.runs + 1):
    for signum in (signal.SIGKILL, signal.SIGTERM):
      result = _one(unshare, signum)
      failed += not result.startswith("ok")
      print(f"run {run} {signal.Signals(signum).name}: {result}", flush=True)
  print(f"{2 * args.runs - failed} of {2 * args.runs} passed")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
