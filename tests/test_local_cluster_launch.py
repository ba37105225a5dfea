"""--local_cluster's launcher in-process, over tiny Python tasks.

tests/test_cluster.py launches real training clusters through the binary;
here `local_cluster.launch` starts a few `python -c` tasks (no TensorFlow),
so each of its paths runs in a second or two: one process per task with its
TF_CONFIG, the exit code it returns, and Ctrl-C stopping every task.
"""

import json
import os
import signal
import sys
import threading

import pytest

from estimator_compat.distribute import cluster_tasks
from estimator_compat.distribute import local_cluster

# Prints the task's TF_CONFIG role and what the launcher told it, then exits
# with the code its role is given in EXIT_CODES.
_TASK = """
import json, os, sys, time
task = json.loads(os.environ["TF_CONFIG"])["task"]
done = os.environ.get("{done}")
chief_pid = os.environ.get("{chief_pid}")
print(task["type"], task["index"], "done_file" if done else "no_done_file",
      "chief_pid" if chief_pid else "no_chief_pid", flush=True)
codes = json.loads(sys.argv[1])
if codes.get(task["type"]) == "sleep":
  time.sleep(60)
sys.exit(codes.get(task["type"], 0))
""".format(done=cluster_tasks.DONE_FILE_ENV,
           chief_pid=cluster_tasks.CHIEF_PID_ENV)


def _argv(**codes):
  return [sys.executable, "-c", _TASK, json.dumps(codes)]


def test_one_process_per_task_with_its_tf_config(capsys):
  code = local_cluster.launch("worker:2,evaluator:1", "multi_worker_mirrored",
                              argv=_argv() + ["--local_cluster=worker:9"])
  assert code == 0
  out = capsys.readouterr().out
  # The chief starts first; the others are told its pid. Every task gets the
  # done file, and --local_cluster is not passed on.
  assert "[chief] chief 0 done_file no_chief_pid" in out
  assert "[worker:0] worker 0 done_file chief_pid" in out
  assert "[evaluator:0] evaluator 0 done_file chief_pid" in out
  assert "[local_cluster] exit codes: {'chief': 0, 'worker:0': 0, " \
         "'evaluator:0': 0}" in out


@pytest.mark.parametrize("codes, expected", [
    (dict(chief=3), 3),
    (dict(evaluator=4), 4),  # the chief succeeded; the evaluator did not
    (dict(worker=5), 0),  # a lost worker is survived
])
def test_exit_code_is_the_chiefs_then_the_evaluators(codes, expected,
                                                     capsys):
  assert local_cluster.launch("worker:2,evaluator:1", None,
                              argv=_argv(**codes)) == expected
  assert "[local_cluster] exit codes:" in capsys.readouterr().out


def test_exit_codes_read_as_a_shell_shows_them():
  assert local_cluster.exit_code(-9) == 137
  assert local_cluster.exit_code(-15) == 143
  assert local_cluster.exit_code(2) == 2


def test_ctrl_c_stops_every_task_and_exits_130(monkeypatch, capsys):
  # The handler ends the launcher with os._exit; here that raises instead.
  def exit_now(code):
    raise SystemExit(code)
  monkeypatch.setattr(local_cluster.os, "_exit", exit_now)
  timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT))
  before = signal.getsignal(signal.SIGINT)
  timer.start()
  try:
    with pytest.raises(SystemExit) as raised:
      local_cluster.launch("worker:2,ps:1", "parameter_server",
                           argv=_argv(chief="sleep", worker="sleep",
                                      ps="sleep"))
  finally:
    timer.cancel()
  assert raised.value.code == 128 + signal.SIGINT
  assert "[local_cluster] stopped every task on signal 2." in (
      capsys.readouterr().out)
  assert signal.getsignal(signal.SIGINT) is before  # handler restored
