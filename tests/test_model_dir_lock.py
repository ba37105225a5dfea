"""One trainer per model_dir: the lock file the chief's train() holds."""

import json
import os
import socket
import subprocess
import threading

import pytest
import tensorflow as tf

import estimator_compat as tf_estimator
from estimator_compat import model_dir_lock
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


def test_a_lock_from_another_host_is_refused_before_anything_is_written(
    tmp_path):
  model_dir = str(tmp_path / "model")
  _write_lock(model_dir, 1, host="some-other-host")
  with pytest.raises(model_dir_lock.ModelDirInUseError,
                     match="some-other-host.*Fix:.*delete"):
    models.estimator(model_dir).train(
        models.input_fn(), steps=1)
  assert os.listdir(model_dir) == [model_dir_lock.LOCK_FILE]
