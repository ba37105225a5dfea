"""A malformed `checkpoint` state file is refused by every mode, naming it.

Issue 28: an empty state file made evaluate() and predict() serve an
untrained model; one naming another folder's checkpoints made training read
that model and its rotation delete that folder's files.
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
