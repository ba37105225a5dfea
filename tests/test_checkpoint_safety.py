"""A trained model is never lost: broken checkpoints, retention, leftovers.

Each train() call builds a new Saver (as a new process does), so fresh
Estimator objects in one process stand for restarted training processes.
"""

import glob
import json
import os
import random
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.checkpoints import checkpoint_files
from estimator_compat.checkpoints import replacing_saver
from tests import models


def _snapshot(model_dir):
  """{relative path: (size, mtime_ns)} of every file under model_dir."""
  out = {}
  for root, _, files in os.walk(model_dir):
    for name in files:
      path = os.path.join(root, name)
      stat = os.stat(path)
      out[os.path.relpath(path, model_dir)] = (stat.st_size, stat.st_mtime_ns)
  return out


def _index_files(model_dir):
  return sorted((f for f in os.listdir(model_dir) if f.endswith(".index")),
                key=lambda f: int(f.split("-")[1].split(".")[0]))


def _trained(model_dir, steps=3, **config):
  config.setdefault("save_checkpoints_steps", 1)
  est = models.estimator(model_dir, **config)
  est.train(models.input_fn(), steps=steps)
  return est


def _break(model_dir, what, step=3):
  prefix = os.path.join(model_dir, f"model.ckpt-{step}")
  if what == "index":
    os.remove(prefix + ".index")
  elif what == "data":
    for path in glob.glob(prefix + ".data-*"):
      os.remove(path)
  else:
    for path in glob.glob(prefix + ".*"):
      os.remove(path)


def _serving_input_fn():
  x = tf.compat.v1.placeholder(tf.float32, [None, models.DIM], name="x")
  return tfe.export.ServingInputReceiver({"x": x}, {"x": x})


@pytest.mark.parametrize("what", ["index", "data", "all"])
def test_train_refuses_named_checkpoint_that_lacks_files(tmp_path, engine,
                                                         what):
  _trained(tmp_path)
  _break(tmp_path, what)
  before = _snapshot(tmp_path)
  with pytest.raises(ValueError) as error:
    _trained(tmp_path, steps=2)
  message = str(error.value)
  assert message.startswith("The passed save_path is not a valid checkpoint")
  assert "model.ckpt-3" in message
  if what == "index":
    assert "model.ckpt-3.index" in message
  if what == "data":
    assert "model.ckpt-3.data-" in message
  # The fix lists the whole checkpoints left, newest first.
  assert "['model.ckpt-2', 'model.ckpt-1', 'model.ckpt-0']" in message
  assert _snapshot(tmp_path) == before


def test_train_resumes_from_older_checkpoint_named_by_the_fix(tmp_path,
                                                              engine):
  _trained(tmp_path)
  _break(tmp_path, "index")
  tf.compat.v1.train.update_checkpoint_state(str(tmp_path), "model.ckpt-2")
  est = _trained(tmp_path, steps=2)
  assert est.latest_checkpoint() == str(tmp_path / "model.ckpt-4")


@pytest.mark.parametrize("what", ["index", "data"])
def test_evaluate_predict_export_refuse_named_broken_checkpoint(tmp_path,
                                                                engine, what):
  est = _trained(tmp_path)
  _break(tmp_path, what)
  before = _snapshot(tmp_path)
  with pytest.raises(ValueError, match=r"not a valid checkpoint.*model\.ckpt-3"):
    est.evaluate(models.input_fn(num_epochs=1))
  with pytest.raises(ValueError, match=r"not a valid checkpoint.*model\.ckpt-3"):
    next(est.predict(models.input_fn(num_epochs=1, labels=False)))
  with pytest.raises(ValueError, match=r"not a valid checkpoint.*model\.ckpt-3"):
    est.export_saved_model(str(tmp_path / "export"), _serving_input_fn)
  with pytest.raises(ValueError, match=r"not a valid checkpoint.*model\.ckpt-3"):
    est.get_variable_value("global_step")
  assert _snapshot(tmp_path) == before  # No eval summaries, no export.


def test_evaluate_refuses_broken_checkpoint_path_argument(tmp_path, engine):
  est = _trained(tmp_path)
  _break(tmp_path, "data", step=2)
  with pytest.raises(ValueError, match=r"lacks \['model\.ckpt-2\.data-.*"
                     r"checkpoint_path of a whole checkpoint"):
    est.evaluate(models.input_fn(num_epochs=1),
                 checkpoint_path=str(tmp_path / "model.ckpt-2"))
  result = est.evaluate(models.input_fn(num_epochs=1),
                        checkpoint_path=str(tmp_path / "model.ckpt-1"))
  assert result["global_step"] == 1


def test_evaluate_without_any_checkpoint_still_initializes(tmp_path, engine):
  result = models.estimator(tmp_path).evaluate(models.input_fn(num_epochs=1))
  assert result["global_step"] == 0


@pytest.mark.parametrize("keep", [2, 3, 5])
def test_keep_checkpoint_max_holds_across_restarts(tmp_path, engine, keep):
  # As the Estimator (TF 2.15) across three processes: the kept list is
  # recovered from the state file, so at most `keep` checkpoints remain.
  for _ in range(3):
    _trained(tmp_path, steps=4, keep_checkpoint_max=keep)
  expected = [f"model.ckpt-{step}.index" for step in range(13 - keep, 13)]
  assert _index_files(tmp_path) == expected
  state = tf.train.get_checkpoint_state(str(tmp_path))
  assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
      f[:-len(".index")] for f in expected]


def test_keep_checkpoint_every_n_hours_across_restarts(tmp_path, engine):
  # Matches the Estimator: checkpoints of an earlier process are deleted
  # normally; this process's saves past every N hours are kept for good.
  _trained(tmp_path, keep_checkpoint_max=2)
  assert _index_files(tmp_path) == ["model.ckpt-2.index", "model.ckpt-3.index"]
  time.sleep(0.05)
  _trained(tmp_path, keep_checkpoint_max=2, keep_checkpoint_every_n_hours=1e-7)
  assert _index_files(tmp_path) == [
      "model.ckpt-3.index", "model.ckpt-4.index", "model.ckpt-5.index",
      "model.ckpt-6.index"]
  _trained(tmp_path, steps=2, keep_checkpoint_max=2)
  assert _index_files(tmp_path) == [
      "model.ckpt-3.index", "model.ckpt-4.index", "model.ckpt-7.index",
      "model.ckpt-8.index"]


def test_leftovers_of_a_killed_save_are_removed_at_training_start(tmp_path,
                                                                  engine):
  _trained(tmp_path, steps=2)
  leftovers = [
      "model.ckpt-3.data-00000-of-00001.tempstate1234567890",
      "model.ckpt-3.index.tempstate987654321",
      "checkpoint.tmp" + "0123456789abcdef" * 2,
      "graph.pbtxt.tmp" + "fedcba9876543210" * 2,
      os.path.join("model.ckpt-3_temp", "part-00000-of-00001.index"),
      os.path.join("model.ckpt-3_temp",
                   "part-00000-of-00001.data-00000-of-00001.tempstate42"),
  ]
  kept = ["notes.tempstate.txt", os.path.join("mine_temp", "data.txt"),
          os.path.join("model.ckpt-9_temp", "my_notes.txt")]
  for name in leftovers + kept:
    os.makedirs(os.path.dirname(tmp_path / name), exist_ok=True)
    (tmp_path / name).write_bytes(b"x")
  whole_before = {f: v for f, v in _snapshot(tmp_path).items()
                  if f.startswith("model.ckpt-") and "_temp" not in f
                  and "tempstate" not in f}
  est = _trained(tmp_path, steps=1)
  for name in leftovers:
    assert not (tmp_path / name).exists(), name
  assert not (tmp_path / "model.ckpt-3_temp").exists()
  for name in kept:
    assert (tmp_path / name).exists(), name
  after = _snapshot(tmp_path)
  for name in whole_before:  # Kept checkpoints are whole (ckpt-2 re-saved).
    assert name in after, name
  assert est.latest_checkpoint() == str(tmp_path / "model.ckpt-3")


def test_resave_of_the_newest_checkpoint_replaces_it_whole(tmp_path,
                                                          monkeypatch):
  # train() saves the restored step again first (as the Estimator did). The
  # sharded Saver merges into `<prefix>.index` in place: a reader or a kill
  # mid-write met a half-written newest checkpoint. The save is staged and
  # renamed over instead, so the named index is a new file, never rewritten.
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "graph")
  _trained(tmp_path, steps=2)
  index = tmp_path / "model.ckpt-2.index"
  before = (index.stat().st_ino, index.read_bytes())

  def killed(staged, prefix):
    del staged, prefix
    raise RuntimeError("killed between the stage and the renames")

  monkeypatch.setattr(replacing_saver, "_rename_over", killed)
  with pytest.raises(RuntimeError, match="killed between"):
    _trained(tmp_path, steps=1)
  assert (index.stat().st_ino, index.read_bytes()) == before
  assert (tmp_path / "model.ckpt-2.resave.index").exists()
  monkeypatch.undo()
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "graph")
  est = _trained(tmp_path, steps=1)
  assert not [f for f in os.listdir(tmp_path) if ".resave" in f]
  assert index.stat().st_ino != before[0]  # Renamed over, not rewritten.
  assert est.latest_checkpoint() == str(tmp_path / "model.ckpt-3")
  reader = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-2"))
  assert reader.get_tensor("global_step") == 2


def test_corrupt_state_file_and_model_dir_file_are_named(tmp_path, engine):
  _trained(tmp_path, steps=1)
  state_file = tmp_path / "checkpoint"
  state_file.write_bytes(b"\x80\xff\x00garbage")
  with pytest.raises(ValueError, match=r"checkpoint state file .*checkpoint "
                     r"is corrupt.*\['model\.ckpt-1', 'model\.ckpt-0'\]"):
    _trained(tmp_path, steps=1)
  with pytest.raises(ValueError, match="is corrupt"):
    models.estimator(tmp_path).evaluate(models.input_fn(num_epochs=1))
  a_file = tmp_path / "a_file"
  a_file.write_text("x")
  with pytest.raises(ValueError, match="is a file, not a directory"):
    _trained(a_file, steps=1)
  assert np.all(a_file.read_text() == "x")


def _rotating_input_fn(model_dir, gone, newest):
  """An eval input_fn that, on its first call, rotates `gone` away as a
  trainer with keep_checkpoint_max would: the state file names `newest`."""
  calls = []

  def input_fn():
    if not calls:
      for path in glob.glob(os.path.join(model_dir, gone + ".*")):
        os.remove(path)
      tf.compat.v1.train.update_checkpoint_state(str(model_dir), newest)
    calls.append(1)
    return models.input_fn(num_epochs=1)()

  return input_fn


def _name_as_newest(model_dir, name):
  tf.compat.v1.train.update_checkpoint_state(str(model_dir), name)


def test_evaluate_moves_on_when_its_checkpoint_is_rotated_away(
    tmp_path, engine, caplog):
  est = _trained(tmp_path)
  _name_as_newest(tmp_path, "model.ckpt-2")
  caplog.set_level("WARNING")
  result = est.evaluate(_rotating_input_fn(tmp_path, "model.ckpt-2",
                                           "model.ckpt-3"))
  assert result["global_step"] == 3
  assert "model.ckpt-2 was deleted before it was restored" in caplog.text


def test_evaluate_of_a_given_checkpoint_does_not_move_on(tmp_path, engine):
  est = _trained(tmp_path)
  with pytest.raises((ValueError, tf.errors.NotFoundError)):
    est.evaluate(_rotating_input_fn(tmp_path, "model.ckpt-2", "model.ckpt-3"),
                 checkpoint_path=str(tmp_path / "model.ckpt-2"))


def test_evaluator_task_moves_on_when_its_checkpoint_is_rotated_away(
    tmp_path, engine, monkeypatch):
  _trained(tmp_path)
  _name_as_newest(tmp_path, "model.ckpt-2")
  monkeypatch.setenv("TF_CONFIG", json.dumps({
      "cluster": {"chief": ["localhost:2222"]},
      "task": {"type": "evaluator", "index": 0}}))
  est = models.estimator(tmp_path, save_checkpoints_steps=1)
  result, _ = tfe.train_and_evaluate(
      est, tfe.TrainSpec(models.input_fn(), max_steps=3),
      tfe.EvalSpec(_rotating_input_fn(tmp_path, "model.ckpt-2",
                                      "model.ckpt-3"),
                   steps=None, start_delay_secs=0, throttle_secs=0))
  assert result["global_step"] == 3


def test_garbage_index_is_named(tmp_path, engine):
  est = _trained(tmp_path)
  (tmp_path / "model.ckpt-3.index").write_bytes(b"not an index" * 10)
  before = _snapshot(tmp_path)
  with pytest.raises(ValueError, match=r"index file .*model\.ckpt-3\.index "
                     r"is corrupt.*Fix: restore"):
    _trained(tmp_path, steps=1)
  with pytest.raises(ValueError, match=r"model\.ckpt-3\.index is corrupt"):
    est.evaluate(models.input_fn(num_epochs=1))
  assert _snapshot(tmp_path) == before


def test_truncated_data_is_named(tmp_path, engine):
  est = _trained(tmp_path)
  data = tmp_path / "model.ckpt-3.data-00000-of-00001"
  data.write_bytes(data.read_bytes()[:50])
  before = _snapshot(tmp_path)
  with pytest.raises(ValueError, match=r"data of .*model\.ckpt-3 is "
                     r"truncated.*model\.ckpt-3\.data-00000-of-00001.*50 "
                     r"bytes.*'model\.ckpt-2'"):
    _trained(tmp_path, steps=1)
  with pytest.raises(ValueError, match="truncated"):
    next(est.predict(models.input_fn(num_epochs=1, labels=False)))
  assert _snapshot(tmp_path) == before


def _saved_step(model_dir):
  """Global step of the checkpoint the state file names (whole), or -1."""
  path = checkpoint_files.checkpoint_to_restore(str(model_dir))
  return -1 if path is None else int(path.rsplit("-", 1)[1])


def _kept(model_dir):
  state = tf.train.get_checkpoint_state(str(model_dir))
  return [os.path.basename(p) + ".index"
          for p in state.all_model_checkpoint_paths]


def _step_of(index_file):
  return int(index_file.split("-")[1].split(".")[0])


@pytest.mark.slow
def test_kill_9_during_training_and_saving_loses_at_most_one_interval(
    tmp_path, engine):
  # Every kill leaves a whole newest checkpoint no older than the one before
  # it (a save is every step: at most one interval is lost) and at most
  # keep_checkpoint_max checkpoints in the kept list; the last run ends at
  # the target. A kill between the state file's update and the deletion of
  # the oldest checkpoint leaves that one outside the list, whole, and it is
  # not deleted later (as with the Estimator): at most one per kill.
  # max_steps leaves room for 20 kills, each up to 0.2 s after a save.
  keep, max_steps, kills = 3, 600, 20
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  command = [sys.executable, "-m", "tests.checkpoint_kill_program",
             str(tmp_path), str(max_steps), str(keep)]
  rng = random.Random(0)
  last = -1
  for _ in range(kills):
    process = subprocess.Popen(command, cwd=root, env=env,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while _saved_step(tmp_path) <= last + 1 and time.time() < deadline:
      assert process.poll() is None, "training ended before it was killed"
      time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 0.2))
    process.kill()
    process.wait()
    step = _saved_step(tmp_path)
    assert step >= last
    assert len(_kept(tmp_path)) <= keep
    # Outside the list: older than it (rotation cut short) or newer than it
    # (saved, not yet recorded; the resumed run saves that step again).
    kept_steps = [_step_of(name) for name in _kept(tmp_path)]
    outside = set(_index_files(tmp_path)) - set(_kept(tmp_path))
    assert all(not min(kept_steps) <= _step_of(name) <= max(kept_steps)
               for name in outside), (outside, kept_steps)
    last = step
  finished = subprocess.run(command, cwd=root, env=env, capture_output=True,
                            text=True, timeout=300, check=False)
  assert finished.returncode == 0, finished.stderr[-3000:]
  assert _saved_step(tmp_path) == max_steps
  assert len(_kept(tmp_path)) == keep
  assert len(_index_files(tmp_path)) <= keep + kills
  assert not [f for f in os.listdir(tmp_path)
              if "tempstate" in f or "_temp" in f or ".tmp" in f]


def test_train_refuses_checkpoints_no_state_file_names(tmp_path, engine):
  del engine
  _trained(tmp_path, steps=3)
  os.remove(os.path.join(tmp_path, "checkpoint"))
  before = _snapshot(tmp_path)
  with pytest.raises(ValueError,
                     match="no 'checkpoint' file.*update_checkpoint_state"):
    models.estimator(tmp_path, save_checkpoints_steps=1).train(
        models.input_fn(), steps=2)
  assert _snapshot(tmp_path) == before
  # The fix in the message resumes where the run left off.
  tf.compat.v1.train.update_checkpoint_state(str(tmp_path), "model.ckpt-3")
  est = models.estimator(tmp_path, save_checkpoints_steps=1)
  est.train(models.input_fn(), steps=2)
  assert est.get_variable_value("global_step") == 5


def test_rotation_cut_short_by_a_kill_is_finished_by_the_next_run(
    tmp_path, engine):
  # Killed after the state file dropped model.ckpt-1 and before its files
  # were deleted: the function engine's next run deletes it (it recorded
  # the rotation); the graph engine (the Estimator's saver hook) leaves it,
  # the documented case. Nothing the state file names is touched.
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  command = [sys.executable, "-m", "tests.checkpoint_kill_program",
             str(tmp_path), "4", "3"]
  died = subprocess.run(command + ["4"], cwd=root, env=env,
                        capture_output=True, text=True, timeout=300)
  assert died.returncode == 9, died.stderr[-3000:]
  assert _kept(tmp_path) == ["model.ckpt-2.index", "model.ckpt-3.index",
                             "model.ckpt-4.index"]
  assert "model.ckpt-1.index" in _index_files(tmp_path)
  finished = subprocess.run(command[:-2] + ["6", "3"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300)
  assert finished.returncode == 0, finished.stderr[-3000:]
  left = sorted(_index_files(tmp_path))
  if engine == "function":
    assert left == ["model.ckpt-4.index", "model.ckpt-5.index",
                    "model.ckpt-6.index"]
    assert not [f for f in os.listdir(tmp_path) if f.startswith(
        ("model.ckpt-1.", ".rotation"))]
  else:
    assert left == ["model.ckpt-1.index", "model.ckpt-4.index",
                    "model.ckpt-5.index", "model.ckpt-6.index"]
