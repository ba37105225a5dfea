"""A malformed `checkpoint` state file is refused by every mode, naming it;
training writes and deletes nothing outside its model_dir.

Issue 28: an empty state file made evaluate() and predict() serve an
untrained model; one naming another folder's checkpoints made training read
that model and its rotation delete that folder's files; a symlink in the
model_dir had a save write through it into another folder.
"""

import os

import pytest
import tensorflow as tf

import estimator_compat as tfe
from tests import models


def _snapshot(folder):
  """{relative path: bytes} of every file under folder."""
  out = {}
  for root, _, files in os.walk(folder):
    for name in files:
      path = os.path.join(root, name)
      with open(path, "rb") as f:
        out[os.path.relpath(path, folder)] = f.read()
  return out


def _serving_input_fn():
  x = tf.compat.v1.placeholder(tf.float32, [None, models.DIM], name="x")
  return tfe.export.ServingInputReceiver({"x": x}, {"x": x})


def _calls(est, export_dir):
  return {
      "train": lambda: est.train(models.input_fn(), steps=1),
      "train max_steps": lambda: est.train(models.input_fn(), max_steps=50),
      "evaluate": lambda: est.evaluate(models.input_fn(num_epochs=1)),
      "predict": lambda: next(est.predict(
          models.input_fn(num_epochs=1, labels=False))),
      "export": lambda: est.export_saved_model(export_dir, _serving_input_fn),
  }


def _trained(model_dir, steps=2):
  est = models.estimator(str(model_dir), save_checkpoints_steps=1,
                         keep_checkpoint_max=2)
  est.train(models.input_fn(), steps=steps)
  return est


_EMPTY = ("Invalid checkpoint state loaded from {model_dir}: the state file "
          "{state} names no checkpoint")
_FOREIGN = ("Invalid checkpoint state loaded from {model_dir}: the state file "
            "{state} names checkpoints outside the model_dir")
_CASES = {
    # As the Estimator: ValueError("Invalid checkpoint state loaded from
    # <model_dir>") in all four modes, then the fix.
    "empty": (b"", _EMPTY),
    "blank": (b"\n  \n", _EMPTY),
    "no newest": (b'all_model_checkpoint_paths: "model.ckpt-2"\n', _EMPTY),
    "unparsable": (b"model_checkpoint_path: {{{",
                   "The checkpoint state file {state} is corrupt"),
    "foreign absolute": (b'model_checkpoint_path: "{other}/model.ckpt-3"\n'
                         b'all_model_checkpoint_paths: "{other}/model.ckpt-2"'
                         b'\nall_model_checkpoint_paths: "{other}/model.ckpt-3"'
                         b'\n', _FOREIGN),
    "foreign relative": (b'model_checkpoint_path: "../other/model.ckpt-3"\n',
                         _FOREIGN),
    "foreign kept only": (b'model_checkpoint_path: "model.ckpt-2"\n'
                          b'all_model_checkpoint_paths: "{other}/model.ckpt-2"'
                          b'\nall_model_checkpoint_paths: "model.ckpt-2"\n',
                          _FOREIGN),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_every_mode_refuses_a_malformed_state_file(tmp_path, engine, case):
  content, expected = _CASES[case]
  model_dir, other = tmp_path / "model", tmp_path / "other"
  _trained(other, steps=3)  # another model, whole checkpoints 2 and 3
  est = _trained(model_dir)
  state = model_dir / "checkpoint"
  state.write_bytes(content.replace(b"{other}", str(other).encode()))
  before, other_before = _snapshot(model_dir), _snapshot(other)
  for mode, call in _calls(est, str(tmp_path / "export")).items():
    with pytest.raises(ValueError) as raised:
      call()
    message = str(raised.value)
    assert message.startswith(expected.format(model_dir=model_dir,
                                              state=state)), (mode, message)
    assert "Nothing was changed on disk. Fix:" in message, (mode, message)
    assert "update_checkpoint_state(" in message, (mode, message)
    assert "'model.ckpt-2'" in message, (mode, message)  # newest whole here
  assert _snapshot(model_dir) == before
  assert _snapshot(other) == other_before
  assert not (tmp_path / "export").exists()
  # The fix works: name a whole checkpoint of the model_dir.
  tf.compat.v1.train.update_checkpoint_state(str(model_dir), "model.ckpt-2")
  assert est.evaluate(models.input_fn(num_epochs=1))["global_step"] == 2


def test_an_empty_state_file_without_checkpoints_says_to_delete_it(tmp_path):
  (tmp_path / "checkpoint").write_bytes(b"")
  est = models.estimator(str(tmp_path))
  with pytest.raises(ValueError, match=r"names no checkpoint.*Fix: no whole "
                     r"checkpoint is in .*: delete .*checkpoint to start over"):
    est.evaluate(models.input_fn(num_epochs=1))


def test_absolute_paths_into_the_model_dir_are_accepted(tmp_path, engine):
  # As TF1's Saver writes without save_relative_paths, and through a
  # symlink to the model_dir.
  model_dir = tmp_path / "model"
  _trained(model_dir)
  tf.compat.v1.train.update_checkpoint_state(
      str(model_dir), str(model_dir / "model.ckpt-2"),
      [str(model_dir / "model.ckpt-1"), str(model_dir / "model.ckpt-2")])
  os.symlink(model_dir, tmp_path / "link")
  est = _trained(tmp_path / "link", steps=1)
  assert est.evaluate(models.input_fn(num_epochs=1))["global_step"] == 3
  assert (model_dir / "model.ckpt-3.index").exists()


class _PlantLinks(tfe.CheckpointSaverListener):
  """Before each save, links the files it will write to files elsewhere."""

  def __init__(self, model_dir, outside):
    self.model_dir, self.outside, self.planted = model_dir, outside, []

  def before_save(self, session, global_step_value):
    for suffix in (".meta", ".data-00000-of-00001"):
      name = f"model.ckpt-{global_step_value}{suffix}"
      (self.outside / name).write_bytes(b"not yours")
      if os.path.lexists(self.model_dir / name):
        os.remove(self.model_dir / name)
      os.symlink(self.outside / name, self.model_dir / name)
      self.planted.append(name)


def test_saves_replace_symlinks_instead_of_writing_through_them(tmp_path,
                                                               engine):
  # Issue 28: the function engine wrote `.meta` in place, through a link.
  # Every file of a save is written under a temporary name and renamed over
  # its place: a link there is replaced, its target left alone.
  model_dir, outside = tmp_path / "model", tmp_path / "outside"
  _trained(model_dir)
  outside.mkdir()
  links = _PlantLinks(model_dir, outside)
  est = models.estimator(str(model_dir), save_checkpoints_steps=1,
                         keep_checkpoint_max=2)
  est.train(models.input_fn(), steps=2, saving_listeners=[links])
  assert "model.ckpt-4.meta" in links.planted
  assert {name: (outside / name).read_bytes() for name in links.planted} == {
      name: b"not yours" for name in links.planted}
  for name in ["model.ckpt-4.meta", "model.ckpt-4.data-00000-of-00001"]:
    assert not (model_dir / name).is_symlink(), name
  assert est.evaluate(models.input_fn(num_epochs=1))["global_step"] == 4


def test_train_refuses_symlinks_where_it_saves(tmp_path, engine):
  # The graph engine's sharded Saver (as the Estimator's) writes
  # `<prefix>.index` in place: a link there would be written through, so
  # train() refuses links at any name a save writes, before anything.
  model_dir, outside = tmp_path / "model", tmp_path / "outside"
  _trained(model_dir)
  outside.mkdir()
  (outside / "model.ckpt-3.index").write_bytes(b"not yours")
  os.symlink(outside / "model.ckpt-3.index", model_dir / "model.ckpt-3.index")
  before = _snapshot(model_dir)
  with pytest.raises(ValueError, match=r"symbolic links where training saves "
                     r"files \(\{'model\.ckpt-3\.index': '.*outside.*Nothing"
                     r" was changed on disk\. Fix: replace each link"):
    _trained(model_dir, steps=2)
  assert _snapshot(model_dir) == before
  assert (outside / "model.ckpt-3.index").read_bytes() == b"not yours"
  # The fix: a copy in place of the link (here: the link removed).
  os.remove(model_dir / "model.ckpt-3.index")
  assert _trained(model_dir, steps=2).latest_checkpoint().endswith("-4")
