"""--local_cluster: this program as a whole cluster on one machine.

`--local_cluster=worker:2,ps:1[,evaluator:1]` starts one loopback process of
the same command line per task (a chief plus the tasks named), each with its
generated TF_CONFIG, streams their output with a task prefix, and stops them
all when the chief ends (also on Ctrl-C): no process is left behind. Each
task dies with the launcher however the launcher ends (kill -9 included:
the kernel sends it SIGKILL when its parent dies), and server tasks exit
when the chief process is gone. The launcher exits with the chief's code
(an evaluator's failure too, once the chief succeeded), and removes its
temporary directory. Servers
listen on 127.0.0.1 only; TensorFlow's gRPC servers have no authentication,
so real clusters belong on a private network.

For multi-worker mirrored training `worker:N` means N workers in all: the
chief is the first of them. For parameter-server training the chief is the
coordinator and `worker:N` adds N workers.
"""

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple

from estimator_compat.distribute import cluster_tasks

_JOBS = ("worker", "ps", "evaluator")
_GRACE_SECS = 30.0
_PR_SET_PDEATHSIG = 1  # From <linux/prctl.h>.


def _die_with_parent():
  """A preexec_fn: the task gets SIGKILL when the launcher dies (Linux).

  Bound before any fork, so that the child only makes one libc call.
  """
  try:
    prctl = ctypes.CDLL(None, use_errno=True).prctl
  except (OSError, AttributeError):
    return None  # Not Linux: tasks end through their pipes and done file.
  return lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def exit_code(code: int) -> int:
  """A process's return code as a shell shows it (-9 -> 137)."""
  return 128 - code if code < 0 else code


def parse(spec: str) -> Dict[str, int]:
  """'worker:2,ps:1' -> {'worker': 2, 'ps': 1}.

  Raises:
    ValueError: a malformed spec, with the expected form.
  """
  counts: Dict[str, int] = {}
  for part in filter(None, (p.strip() for p in spec.split(","))):
    job, _, number = part.partition(":")
    if job not in _JOBS or not number.isdigit() or int(number) < 1:
      raise ValueError(
          f"--local_cluster={spec!r}: {part!r} must be JOB:COUNT with JOB in "
          f"{_JOBS} and COUNT >= 1, e.g. --local_cluster=worker:2,ps:1.")
    counts[job] = int(number)
  if not counts.get("worker"):
    raise ValueError(f"--local_cluster={spec!r} needs at least worker:1.")
  if counts.get("evaluator", 0) > 1:
    raise ValueError("--local_cluster: at most one evaluator.")
  return counts


def plan(counts: Dict[str, int], strategy: Optional[str]
        ) -> Tuple[Dict[str, List[str]], List[Tuple[str, int]]]:
  """(cluster spec, tasks to start) for the counts and strategy."""
  if strategy == "parameter_server" and not counts.get("ps"):
    raise ValueError(
        "--strategy=parameter_server needs ps tasks. Fix: "
        "--local_cluster=worker:2,ps:1.")
  if strategy != "parameter_server" and counts.get("ps"):
    raise ValueError(
        f"--local_cluster has ps tasks but --strategy={strategy}. Fix: "
        "--strategy=parameter_server, or drop ps from --local_cluster.")
  workers = counts["worker"]
  if strategy != "parameter_server":
    workers -= 1  # The chief is the first worker.
  spec = cluster_tasks.loopback_cluster(
      workers=workers, ps=counts.get("ps", 0),
      evaluator=counts.get("evaluator", 0))
  tasks = [(job, i) for job in ("chief", "worker", "ps", "evaluator")
           for i in range(len(spec.get(job, [])))]
  return spec, tasks


def _without_local_cluster(argv: Sequence[str]) -> List[str]:
  out, skip = [], False
  for arg in argv:
    if skip:
      skip = False
      continue
    if arg == "--local_cluster":
      skip = True
      continue
    if arg.startswith("--local_cluster="):
      continue
    out.append(arg)
  return out


def _stream(process: subprocess.Popen, prefix: str, lock: threading.Lock):
  for line in iter(process.stdout.readline, b""):
    with lock:
      sys.stdout.write(f"[{prefix}] " + line.decode(errors="replace"))
      sys.stdout.flush()


def _stop(processes: Dict[str, subprocess.Popen],
          grace_secs: float = 10.0) -> None:
  """SIGTERM to each process group; SIGKILL to those not gone in time."""
  for process in processes.values():
    if process.poll() is None:
      try:
        os.killpg(process.pid, signal.SIGTERM)
      except ProcessLookupError:
        pass
  deadline = time.time() + grace_secs
  for process in processes.values():
    try:
      process.wait(timeout=max(0.1, deadline - time.time()))
    except subprocess.TimeoutExpired:
      try:
        os.killpg(process.pid, signal.SIGKILL)
      except ProcessLookupError:
        pass
      process.wait()


def launch(spec_text: str, strategy: Optional[str],
           argv: Optional[Sequence[str]] = None) -> int:
  """Runs the cluster; returns the exit code (the chief's, or a failure's).

  Args:
    spec_text: the --local_cluster value.
    strategy: the --strategy value.
    argv: the command line to start per task (default: this process's,
      sys.orig_argv, without --local_cluster).
  """
  spec, tasks = plan(parse(spec_text), strategy)
  command = _without_local_cluster(
      list(argv) if argv is not None else list(sys.orig_argv))
  done_dir = tempfile.mkdtemp(prefix="estimator_compat_cluster_")
  done_file = os.path.join(done_dir, "chief_done")
  lock = threading.Lock()
  preexec = _die_with_parent()
  processes: Dict[str, subprocess.Popen] = {}
  streams = []
  previous = {}

  def on_signal(signum, frame):
    del frame
    # The chief first, with time to save on the signal (preemption.py) while
    # the ps tasks that hold the variables still serve; then the others.
    if "chief" in processes:
      _stop({"chief": processes["chief"]}, _GRACE_SECS)
    _stop(processes)
    shutil.rmtree(done_dir, ignore_errors=True)
    print(f"[local_cluster] stopped every task on signal {signum}.",
          flush=True)
    # Exit now: the launcher holds nothing to clean up, and interpreter
    # shutdown can block on the output threads of the killed tasks.
    os._exit(128 + signum)  # pylint: disable=protected-access

  for sig in (signal.SIGINT, signal.SIGTERM):
    previous[sig] = signal.signal(sig, on_signal)
  try:
    for job, index in tasks:
      env = dict(os.environ,
                 TF_CONFIG=cluster_tasks.tf_config(spec, job, index))
      env[cluster_tasks.DONE_FILE_ENV] = done_file
      if "chief" in processes:  # Started first: servers watch its pid.
        env[cluster_tasks.CHIEF_PID_ENV] = str(processes["chief"].pid)
      name = job if job == "chief" else f"{job}:{index}"
      process = subprocess.Popen(
          command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
          start_new_session=True, preexec_fn=preexec)
      processes[name] = process
      thread = threading.Thread(target=_stream, args=(process, name, lock),
                                daemon=True)
      thread.start()
      streams.append(thread)
    # Poll rather than block in waitpid: a signal may be delivered to
    # another thread of this process, and Python runs its handler only when
    # the main thread wakes up.
    while processes["chief"].poll() is None:
      time.sleep(0.2)
    chief_code = processes["chief"].returncode
    # Servers exit 0 once they see the chief's done file (or with an error
    # once the chief process is gone); give them a moment. After a failed
    # chief there is nothing to wait for.
    deadline = time.time() + (_GRACE_SECS if chief_code == 0 else 0)
    codes = {}
    for name, process in processes.items():
      try:
        codes[name] = process.wait(timeout=max(0.1, deadline - time.time()))
      except subprocess.TimeoutExpired:
        codes[name] = None
    for thread in streams:
      thread.join(timeout=5)
    print(f"[local_cluster] exit codes: {codes}")
    if chief_code != 0:
      return exit_code(chief_code)
    # Training finished: a worker lost on the way was survived. An
    # evaluator's failure is still a failure of what was asked for.
    return exit_code(codes.get("evaluator:0") or 0)
  finally:
    _stop(processes)
    shutil.rmtree(done_dir, ignore_errors=True)
    for sig, handler in previous.items():
      signal.signal(sig, handler)
