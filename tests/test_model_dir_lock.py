"""One trainer per model_dir: the lock file the chief's train() holds."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
import tensorflow as tf

import estimator_compat as tf_estimator
from estimator_compat.checkpoints import checkpoint_files
from estimator_compat.front import model_dir_lock
from tests import models


def _write_lock(model_dir, pid, host=None):
  os.makedirs(model_dir, exist_ok=True)
  with open(os.path.join(model_dir, model_dir_lock.LOCK_FILE), "w") as f:
    json.dump({"pid": pid, "host": host or socket.gethostname(),
               "started": 0}, f)


class _BlockingHook(tf_estimator.SessionRunHook):
  """Holds the first training step until released."""

  def __init__(self):
    self.training = threading.Event()
    self.release = threading.Event()

  def before_run(self, run_context):
    self.training.set()
    self.release.wait(60)


def test_a_second_trainer_fails_at_once_naming_the_holder(tmp_path, engine):
  del engine
  model_dir = str(tmp_path / "model")
  first = models.estimator(model_dir)
  hook = _BlockingHook()
  errors = []
  thread = threading.Thread(
      target=lambda: first.train(models.input_fn(), hooks=[hook], steps=2))
  thread.start()
  try:
    assert hook.training.wait(60)
    second = models.estimator(model_dir)
    with pytest.raises(model_dir_lock.ModelDirInUseError) as raised:
      second.train(models.input_fn(), steps=2)
    errors.append(str(raised.value))
  finally:
    hook.release.set()
    thread.join(60)
  assert f"pid {os.getpid()}" in errors[0] and "Fix:" in errors[0]
  # The first run finished and released the lock; training again works.
  assert tf.train.latest_checkpoint(model_dir).endswith("-2")
  assert not os.path.exists(os.path.join(model_dir, model_dir_lock.LOCK_FILE))
  models.estimator(model_dir).train(
      models.input_fn(), steps=1)
  assert tf.train.latest_checkpoint(model_dir).endswith("-3")


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path, engine,
                                                       caplog):
  del engine
  dead = subprocess.Popen(["true"])
  dead.wait()
  model_dir = str(tmp_path / "model")
  _write_lock(model_dir, dead.pid)
  models.estimator(model_dir).train(
      models.input_fn(), steps=1)
  assert tf.train.latest_checkpoint(model_dir).endswith("-1")
  assert "Taking over the training lock" in caplog.text
  assert not os.path.exists(os.path.join(model_dir, model_dir_lock.LOCK_FILE))


def _snapshot(model_dir):
  """{relative path: (bytes, mtime_ns)} of everything under model_dir."""
  out = {}
  for root, dirs, files in os.walk(model_dir):
    for name in dirs + files:
      path = os.path.join(root, name)
      content = b"<dir>" if name in dirs else open(path, "rb").read()
      out[os.path.relpath(path, model_dir)] = (content,
                                               os.stat(path).st_mtime_ns)
  return out


# What a save in progress has on disk (see checkpoint_files): the refused
# trainer must not take them for leftovers of a killed save.
_SAVE_IN_PROGRESS = [
    "model.ckpt-7.data-00000-of-00001.tempstate1234567890",
    "model.ckpt-7.index.tempstate987654321",
    "checkpoint.tmp" + "0123456789abcdef" * 2,
    os.path.join("model.ckpt-7_temp", "part-00000-of-00001.index"),
]


def _fake_save_in_progress(model_dir):
  for name in _SAVE_IN_PROGRESS:
    os.makedirs(os.path.dirname(os.path.join(model_dir, name)), exist_ok=True)
    with open(os.path.join(model_dir, name), "wb") as f:
      f.write(b"half a save")


def test_a_refused_trainer_touches_nothing_in_the_model_dir(tmp_path, engine):
  # Issue 28: the refused trainer removed the running one's save in progress
  # (leftovers are cleaned before training): the lock must come first.
  del engine
  model_dir = str(tmp_path / "model")
  hook = _BlockingHook()
  first = models.estimator(model_dir)
  thread = threading.Thread(
      target=lambda: first.train(models.input_fn(), hooks=[hook], steps=2))
  thread.start()
  try:
    assert hook.training.wait(60)
    _fake_save_in_progress(model_dir)
    before = _snapshot(model_dir)
    for kwargs in ({"steps": 2}, {"max_steps": 50}):
      with pytest.raises(model_dir_lock.ModelDirInUseError):
        models.estimator(model_dir).train(models.input_fn(), **kwargs)
    assert _snapshot(model_dir) == before
  finally:
    hook.release.set()
    thread.join(60)
  assert tf.train.latest_checkpoint(model_dir).endswith("-2")


_HOLDER = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, json.dumps({"pid": 1, "host": "another-container",
                         "started": 0}).encode())
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def held_by_another_process(tmp_path):
  """A process (another trainer, container or host) holding the lock."""
  model_dir = tmp_path / "model"
  model_dir.mkdir()
  lock_file = str(model_dir / model_dir_lock.LOCK_FILE)
  holder = subprocess.Popen([sys.executable, "-c", _HOLDER, lock_file],
                            stdout=subprocess.PIPE, text=True)
  try:
    assert holder.stdout.readline().strip() == "held"
    yield str(model_dir), holder
  finally:
    holder.kill()
    holder.wait()


def test_a_lock_held_by_another_process_is_refused_touching_nothing(
    held_by_another_process):
  model_dir, holder = held_by_another_process
  _fake_save_in_progress(model_dir)
  before = _snapshot(model_dir)
  with pytest.raises(model_dir_lock.ModelDirInUseError,
                     match="pid 1 on host 'another-container'.*Fix:"):
    models.estimator(model_dir).train(models.input_fn(), steps=1)
  assert _snapshot(model_dir) == before
  # Once the holder is gone (killed: its lock file stays), it is taken over.
  holder.kill()
  holder.wait()
  models.estimator(model_dir).train(models.input_fn(), steps=1)
  assert tf.train.latest_checkpoint(model_dir).endswith("-1")
  assert not os.path.exists(os.path.join(model_dir, model_dir_lock.LOCK_FILE))


@pytest.mark.parametrize("content", [
    b"", b"{not json", b"[1, 2]", b"\x80\xff\x00",
    b'{"pid": 7, "host": "h", "started": "yesterday"}',
    b'{"pid": "x", "host": null, "started": 1e300}', None])
def test_a_lock_file_nobody_holds_is_taken_over_whatever_it_holds(
    tmp_path, content, caplog):
  # None: a lock of this pid on this host, as a trainer restarted as pid 1
  # in a new container finds the one its killed predecessor (pid 1) left.
  model_dir = str(tmp_path / "model")
  os.makedirs(model_dir)
  if content is None:
    content = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                          "started": 0}).encode()
  with open(os.path.join(model_dir, model_dir_lock.LOCK_FILE), "wb") as f:
    f.write(content)
  caplog.set_level("WARNING")
  models.estimator(model_dir).train(models.input_fn(), steps=1)
  assert tf.train.latest_checkpoint(model_dir).endswith("-1")
  assert "Taking over the training lock" in caplog.text
  assert not os.path.exists(os.path.join(model_dir, model_dir_lock.LOCK_FILE))


def test_garbage_in_a_held_lock_names_an_unknown_holder(
    held_by_another_process):
  model_dir, _ = held_by_another_process
  path = os.path.join(model_dir, model_dir_lock.LOCK_FILE)
  for content, holder in [('{"pid": 3, "started": "soon"}', "pid 3 on"),
                          ("garbage", "an unknown process"), ("", "unknown")]:
    with open(path, "w") as f:
      f.write(content)
    with pytest.raises(model_dir_lock.ModelDirInUseError, match=holder):
      model_dir_lock.acquire(model_dir)
  assert os.listdir(model_dir) == [model_dir_lock.LOCK_FILE]


def test_a_symlinked_lock_file_is_refused_and_not_followed(tmp_path):
  model_dir, outside = tmp_path / "model", tmp_path / "outside.txt"
  model_dir.mkdir()
  outside.write_bytes(b"keep me")
  os.symlink(outside, model_dir / model_dir_lock.LOCK_FILE)
  with pytest.raises(ValueError, match="symbolic link.*Fix: remove"):
    models.estimator(model_dir).train(models.input_fn(), steps=1)
  assert outside.read_bytes() == b"keep me"


def test_train_on_a_read_only_model_dir_fails_first_with_the_fix(tmpfs):
  mount, remount = tmpfs
  model_dir = str(mount / "model")
  models.estimator(model_dir).train(models.input_fn(), steps=2)
  remount("ro")
  for folder in (model_dir, str(mount / "new")):
    with pytest.raises(tf.errors.PermissionDeniedError,
                       match="Read-only file system.*cannot be written.*Fix:"):
      models.estimator(folder).train(models.input_fn(), steps=1)
  # As the Estimator: training already at max_steps writes nothing, works.
  models.estimator(model_dir).train(models.input_fn(), max_steps=2)


def _children(pid):
  with open(f"/proc/{pid}/task/{pid}/children", encoding="utf-8") as f:
    return [int(child) for child in f.read().split()]


@pytest.mark.slow
def test_a_trainer_restarted_as_pid_1_in_a_new_container_takes_over(tmp_path):
  # Issue 28: a trainer running as pid 1 (Docker, Kubernetes) is killed; its
  # restart is pid 1 on the same host again and must resume, not be refused
  # by the lock its predecessor left.
  unshare = shutil.which("unshare")
  probe = unshare and subprocess.run(
      [unshare, "--pid", "--fork", "--mount-proc", "true"],
      capture_output=True, check=False)
  if not probe or probe.returncode != 0:
    pytest.skip("cannot make pid namespaces here (unshare, root)")
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  model_dir, marker = str(tmp_path / "model"), tmp_path / "pid"
  command = [unshare, "--pid", "--fork", "--mount-proc", sys.executable,
             "-m", "tests.lock_restart_program", model_dir, "5"]
  first = subprocess.Popen(command + [str(marker)], cwd=root, env=env,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
  try:
    deadline = time.time() + 120
    while not marker.exists() or not marker.read_text():
      assert first.poll() is None and time.time() < deadline
      time.sleep(0.1)
    assert marker.read_text() == "1"  # pid 1 in its namespace
    for child in _children(first.pid):
      os.kill(child, signal.SIGKILL)  # The trainer, not unshare: kill -9.
    first.wait(60)
  finally:
    first.kill()
    first.wait()
  assert os.path.exists(os.path.join(model_dir, model_dir_lock.LOCK_FILE))
  restarted = subprocess.run(command, cwd=root, env=env, capture_output=True,
                             text=True, timeout=300, check=False)
  assert restarted.returncode == 0, restarted.stderr[-3000:]
  assert "Taking over the training lock" in restarted.stderr
  assert "pid 1 on host" in restarted.stderr
  assert tf.train.latest_checkpoint(model_dir).endswith("-5")
  assert not os.path.exists(os.path.join(model_dir, model_dir_lock.LOCK_FILE))


@pytest.mark.slow
def test_two_trainers_started_together_one_trains_the_other_is_refused(
    tmp_path):
  # Issue 28: the refused trainer removed the other's save in progress, and
  # that one failed at its save. Saves every step, so that a save is often
  # in progress when the second trainer starts.
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  model_dir = str(tmp_path / "model")
  for max_steps in (150, 300):
    command = [sys.executable, "-m", "tests.checkpoint_kill_program",
               model_dir, str(max_steps), "3"]
    runs = [subprocess.Popen(command, cwd=root, env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    codes = [run.returncode for run in runs]
    finals = [out for out, _ in outputs if "FINAL" in out]
    assert any(f"model.ckpt-{max_steps}" in out for out in finals), outputs
    refused = [err for code, (_, err) in zip(codes, outputs) if code != 0]
    # The other was refused, or (started late) found max_steps reached.
    assert len(refused) == 1 or all(code == 0 for code in codes), outputs
    for err in refused:
      assert "ModelDirInUseError" in err and "Fix:" in err, err[-3000:]
    state = tf.train.get_checkpoint_state(model_dir)
    assert state.model_checkpoint_path.endswith(f"-{max_steps}")
    for kept in state.all_model_checkpoint_paths:
      assert not checkpoint_files.missing_files(kept), kept
    assert not os.path.exists(os.path.join(model_dir, model_dir_lock.LOCK_FILE))
