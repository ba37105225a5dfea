"""SIGTERM / SIGINT during train(): a save at the step reached, then the signal.

In-process cases send the signal from a hook at a known step; the slow case
signals a training subprocess at random moments and restarts it each time.
"""

import errno
import fcntl
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.front import model_dir_lock
from tests import models


class _SignalAt(tfe.SessionRunHook):
  """Sends `signum` to this process after the step that reaches `step`."""

  def __init__(self, signum, step):
    self._signum, self._step = signum, step

  def begin(self):
    self._global_step = tf.compat.v1.train.get_global_step()

  def before_run(self, run_context):
    return tfe.SessionRunArgs(self._global_step)

  def after_run(self, run_context, run_values):
    if run_values.results + 1 == self._step:
      os.kill(os.getpid(), self._signum)


class _Ends(tfe.CheckpointSaverListener):

  def __init__(self):
    self.saved, self.ended = [], []

  def after_save(self, session, global_step_value):
    self.saved.append(global_step_value)

  def end(self, session, global_step_value):
    self.ended.append(global_step_value)


def _lock_is_free(model_dir):
  path = os.path.join(str(model_dir), model_dir_lock.LOCK_FILE)
  with open(path, "a") as f:
    try:
      fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
      assert e.errno in (errno.EAGAIN, errno.EACCES)
      return False
    fcntl.flock(f, fcntl.LOCK_UN)
  return True


def _estimator(model_dir, **config):
  return models.estimator(model_dir, save_checkpoints_steps=1000,
                          log_step_count_steps=None, save_summary_steps=None,
                          **config)


def test_sigint_saves_at_the_step_reached_then_raises_keyboard_interrupt(
    tmp_path, engine):
  del engine
  est, ends = _estimator(tmp_path), _Ends()
  before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
  with pytest.raises(KeyboardInterrupt):
    est.train(models.input_fn(), max_steps=50,
              hooks=[_SignalAt(signal.SIGINT, 4)], saving_listeners=[ends])
  assert est.latest_checkpoint().endswith("model.ckpt-4")
  assert (ends.saved, ends.ended) == ([0, 4], [4])
  assert _lock_is_free(tmp_path)
  assert (signal.getsignal(signal.SIGINT),
          signal.getsignal(signal.SIGTERM)) == before
  # The restart resumes there.
  est.train(models.input_fn(), steps=2)
  assert est.latest_checkpoint().endswith("model.ckpt-6")


def test_a_handler_of_the_program_runs_after_the_save(tmp_path, engine):
  del engine
  calls = []
  previous = signal.signal(signal.SIGTERM,
                           lambda signum, frame: calls.append(signum))
  try:
    est, ends = _estimator(tmp_path), _Ends()
    est.train(models.input_fn(), max_steps=50,
              hooks=[_SignalAt(signal.SIGTERM, 3)], saving_listeners=[ends])
    assert calls == [signal.SIGTERM]
    assert (ends.saved, ends.ended) == ([0, 3], [3])
    assert est.latest_checkpoint().endswith("model.ckpt-3")
    assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None)
    signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
    assert calls == [signal.SIGTERM] * 2  # Still the program's own.
  finally:
    signal.signal(signal.SIGTERM, previous)


def test_off_the_signal_acts_at_once(tmp_path, engine):
  del engine
  est, ends = _estimator(tmp_path, save_on_preemption=False), _Ends()
  with pytest.raises(KeyboardInterrupt):
    est.train(models.input_fn(), max_steps=50,
              hooks=[_SignalAt(signal.SIGINT, 4)], saving_listeners=[ends])
  assert ends.ended == []
  assert est.latest_checkpoint().endswith("model.ckpt-0")


def test_run_config_field():
  config = tfe.RunConfig()
  assert config.save_on_preemption is True
  assert config.replace(save_on_preemption=False).save_on_preemption is False
  assert config.replace(
      save_on_preemption=False).replace(tf_random_seed=3).save_on_preemption \
      is False
  with pytest.raises(ValueError, match="save_on_preemption must be True or"):
    tfe.RunConfig(save_on_preemption="no")


def _log(path):
  if not os.path.exists(path):
    return []
  with open(path) as f:
    return [line.split() for line in f.read().splitlines()]


@pytest.mark.slow
def test_sigterm_at_random_moments_saves_and_resumes_exactly(tmp_path,
                                                              engine):
  # Each run is signalled at a random moment after its first save: it exits
  # with 143, the state file names a checkpoint at the step it reached (its
  # listener's end() saw that step), the lock is free, and the next run
  # starts at that step from the saved values.
  del engine
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  model_dir, log = tmp_path / "model", str(tmp_path / "log")
  command = [sys.executable, "-m", "tests.preemption_program",
             str(model_dir), log, "100000", "slow"]
  rng = random.Random(1)
  last = 0
  for _ in range(3):
    lines = len(_log(log))
    process = subprocess.Popen(command, cwd=root, env=env,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not any(line[0] == "after_save" for line in _log(log)[lines:]):
      assert process.poll() is None, process.stderr.read()[-3000:]
      assert time.time() < deadline
      time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 1.0))
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143, err[-3000:]
    run = _log(log)[lines:]
    assert ["start", str(last)] in run
    saved = np.load(f"{log}.{last}.npz")
    state = tf.train.latest_checkpoint(str(model_dir))
    if last:  # The values it started from are those of the last save.
      for name in saved.files:
        np.testing.assert_array_equal(
            saved[name], tf.train.load_variable(
                f"{model_dir}/model.ckpt-{last}", name.replace("__", "/")))
    step = int(run[-1][1])
    assert run[-1] == ["end", str(step)] and ["after_save", str(step)] in run
    # (A signal before the first step stops at the restored step.)
    assert state.endswith(f"model.ckpt-{step}") and step >= last
    assert _lock_is_free(model_dir)
    last = step
  assert last > 0
