"""Cluster tasks: loopback cluster specs, servers, and the chief's done mark.

Under parameter-server training the `ps` and `worker` tasks only serve: they
start a `tf.distribute.Server` and wait until the chief (the coordinator)
has finished, then exit 0. The chief says it has finished by writing
`<model_dir>/.cluster_done` (model_dir is shared by all tasks, as the
evaluator needs it too); a server task stops when that file is newer than
its own start. Under `--local_cluster` a server task also knows the chief's
process id, and exits with an error as soon as the chief process is gone
without having written the done file (it was killed or crashed), instead of
waiting for a mark that never comes.
"""

import atexit
import json
import os
import socket
import time
from typing import Dict, List, Optional

import tensorflow as tf

from estimator_compat.distribute import strategies
from estimator_compat.front import tf_logging as logging
from estimator_compat.front.configuration import Choices

DONE_FILE = ".cluster_done"
_POLL_SECS = 0.5


def free_ports(count: int) -> List[int]:
  """`count` distinct free TCP ports on 127.0.0.1."""
  sockets, ports = [], []
  try:
    for _ in range(count):
      s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
      s.bind(("127.0.0.1", 0))
      sockets.append(s)
      ports.append(s.getsockname()[1])
  finally:
    for s in sockets:
      s.close()
  return ports


def loopback_cluster(workers: int, ps: int = 0, evaluator: int = 0,
                     chief: int = 1) -> Dict[str, List[str]]:
  """A cluster spec dict on 127.0.0.1 with free ports."""
  counts = [("chief", chief), ("worker", workers), ("ps", ps),
            ("evaluator", evaluator)]
  ports = iter(free_ports(sum(n for _, n in counts)))
  return {job: [f"127.0.0.1:{next(ports)}" for _ in range(n)]
          for job, n in counts if n}


def tf_config(cluster: Dict[str, List[str]], task_type: str,
              task_id: int) -> str:
  """The TF_CONFIG JSON of one task. Evaluators are not cluster members."""
  members = {job: addrs for job, addrs in cluster.items()
             if job != "evaluator"}
  return json.dumps({"cluster": members,
                     "task": {"type": task_type, "index": task_id}})


DONE_FILE_ENV = "ESTIMATOR_COMPAT_DONE_FILE"  # Set by --local_cluster.
CHIEF_PID_ENV = "ESTIMATOR_COMPAT_CHIEF_PID"  # Likewise, for server tasks.
_marked_at_exit = set()


def done_path(model_dir: Optional[str]) -> str:
  """The chief's done file: $ESTIMATOR_COMPAT_DONE_FILE or in model_dir."""
  path = os.environ.get(DONE_FILE_ENV)
  if path:
    return path
  if not model_dir:
    raise ValueError(
        "Server tasks need the shared model_dir to learn when the chief is "
        "done. Fix: pass the same model_dir to every task.")
  return os.path.join(model_dir, DONE_FILE)


def worker_done_path(model_dir: Optional[str], task_id: int) -> str:
  """A between-graph worker's done file, beside the chief's."""
  return f"{done_path(model_dir)}.worker-{task_id}"


def mark_done(model_dir: Optional[str],
              worker: Optional[int] = None) -> None:
  """The chief (or a between-graph worker): training has finished."""
  path = (done_path(model_dir) if worker is None else
          worker_done_path(model_dir, worker))
  tf.io.gfile.makedirs(os.path.dirname(path) or ".")
  with tf.io.gfile.GFile(path, "w") as f:
    f.write(str(time.time()))


def mark_done_at_exit(model_dir: Optional[str],
                      worker: Optional[int] = None) -> None:
  """The chief (or a between-graph worker): mark done at exit (once)."""
  path = (done_path(model_dir) if worker is None else
          worker_done_path(model_dir, worker))
  if path not in _marked_at_exit:
    _marked_at_exit.add(path)
    atexit.register(mark_done, model_dir, worker)


def _workers_done(config, choices: Choices, model_dir: Optional[str],
                  since: float) -> bool:
  """Between graphs, whether every worker marked its training done.

  Its workers train against this task's variables after the chief is done
  (asynchronous steps): a ps that left first would hang them.
  """
  if not strategies.between_graph(config, choices):
    return True
  workers = config.cluster_spec.as_dict().get("worker", [])
  return all(_marked_since(worker_done_path(model_dir, i), since)
             for i in range(len(workers)))


def done_since(model_dir: Optional[str], since: float) -> bool:
  """True if the chief marked the run done after `since` (a time.time())."""
  return _marked_since(done_path(model_dir), since)


def _marked_since(path: str, since: float) -> bool:
  """True if the done file `path` was written after `since`."""
  if not tf.io.gfile.exists(path):
    return False
  try:
    with tf.io.gfile.GFile(path) as f:
      return float(f.read().strip() or 0) >= since
  except (ValueError, tf.errors.OpError):
    return False


class ChiefGoneError(RuntimeError):
  """The chief process ended without marking the run done."""


def process_alive(pid: int) -> bool:
  """Whether process `pid` exists on this host and is not a zombie."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:
    return True
  try:
    with open(f"/proc/{pid}/stat") as f:
      return f.read().rsplit(")", 1)[1].split()[0] != "Z"
  except (OSError, IndexError):
    return True  # No /proc (not Linux): kill(0) said it exists.


def _chief_gone() -> Optional[int]:
  """The chief's pid if $ESTIMATOR_COMPAT_CHIEF_PID names a dead process."""
  pid = os.environ.get(CHIEF_PID_ENV)
  if pid and pid.isdigit() and not process_alive(int(pid)):
    return int(pid)
  return None


def serves_only(config, choices: Choices) -> bool:
  """True for ps and worker tasks of parameter-server training.

  Workers of between-graph training (the graph engine's, see
  strategies.between_graph) train instead.
  """
  if config.task_type == "worker" and strategies.between_graph(config,
                                                                choices):
    return False
  return config.is_distributed and config.task_type in ("ps", "worker") and (
      strategies.training_mode(config, choices.strategy) ==
      "parameter_server")


def serve_until_done(config, choices: Choices, model_dir: Optional[str],
                     timeout_secs: Optional[float] = None) -> None:
  """Starts this task's server and blocks until the chief is done.

  `choices` (front/configuration.py) say whether workers train between
  graphs, so that this task waits for them too.

  Raises:
    ValueError: no model_dir to watch for the chief's done mark.
    ChiefGoneError: under --local_cluster, the chief process ended without
      marking the run done.
  """
  done_path(model_dir)  # Fails early without a place to watch.
  started = time.time()
  server_config = tf.compat.v1.ConfigProto(
      inter_op_parallelism_threads=strategies.PS_WORKER_INTER_OP_THREADS)
  server = tf.distribute.Server(
      config.cluster_spec, job_name=config.task_type,
      task_index=config.task_id, protocol="grpc", config=server_config,
      start=True)
  logging.info("%s %d serving at %s until the chief is done.",
               config.task_type, config.task_id, server.target)
  while not (done_since(model_dir, started) and
             _workers_done(config, choices, model_dir, started)):
    gone = _chief_gone()
    # The chief writes its mark before it exits: look once more.
    if gone is not None and not done_since(model_dir, started):
      raise ChiefGoneError(
          f"The chief process (pid {gone}) ended without marking the run "
          f"done, so {config.task_type} {config.task_id} stops serving. Fix: "
          "read the chief's output for its error, then start the cluster "
          "again; training resumes from the last checkpoint in model_dir.")
    if timeout_secs is not None and time.time() - started > timeout_secs:
      raise TimeoutError(f"The chief did not finish in {timeout_secs} s.")
    time.sleep(_POLL_SECS)
  logging.info("The chief is done; %s %d exits.", config.task_type,
               config.task_id)
