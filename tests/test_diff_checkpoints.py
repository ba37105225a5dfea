"""migration.diff.checkpoints on hand-written checkpoints: steps, the
`checkpoint` state file and each kind of variable difference
(tests/test_migration_diff.py runs it on trained model_dirs)."""

import os

import numpy as np
import tensorflow as tf

from migration.diff import checkpoints


def _write(model_dir, step, variables):
  """Writes {name: array} as the checkpoint `model.ckpt-STEP`."""
  os.makedirs(model_dir, exist_ok=True)
  names = sorted(variables)
  tf.raw_ops.SaveV2(
      prefix=os.path.join(model_dir, f"model.ckpt-{step}"),
      tensor_names=names, shape_and_slices=[""] * len(names),
      tensors=[tf.constant(variables[n]) for n in names])


def _state(model_dir, steps):
  paths = [os.path.join(model_dir, f"model.ckpt-{s}") for s in steps]
  tf.compat.v1.train.update_checkpoint_state(model_dir, paths[-1], paths)


def _found(differences):
  return [(d.kind, d.where, d.detail) for d in differences]


def test_variable_differences_and_a_missing_state_file(tmp_path):
  old, new = str(tmp_path / "old"), str(tmp_path / "new")
  _write(old, 0, {"w": np.zeros(2, np.float32)})
  _write(old, 10, {"w": np.ones(2, np.float32), "b": np.ones(1, np.float32),
                   "only_old": np.int64(3), "v": np.ones(2, np.float32)})
  _state(old, [0, 10])
  _write(new, 5, {"w": np.zeros(2, np.float32)})
  _write(new, 10, {"w": np.ones(3, np.float32), "b": np.ones(1, np.float64),
                   "only_new": np.ones(2, np.float32),
                   "v": np.array([1.0, 2.0], np.float32)})
  differences, notes, both = checkpoints.compare(old, new, 1e-6, 1e-6)
  assert both == 1
  found = _found(differences)
  assert found[:2] == [
      ("checkpoints", ".", "checkpoint steps old [0, 10] vs new [5, 10] "
       "(only old: [0], only new: [5])"),
      ("checkpoint_state", "checkpoint",
       "no `checkpoint` state file on the new side")]
  assert found[2:] == [
      ("variable_missing", "model.ckpt-10: only_new",
       "only on the new side (float32[2])"),
      ("variable_missing", "model.ckpt-10: only_old",
       "only on the old side (int64[])"),
      ("variable_dtype", "model.ckpt-10: b", "old float32 vs new float64"),
      ("variable_value", "model.ckpt-10: v",
       "1 of 2 values differ (rtol 1e-06, atol 1e-06); largest at [1]: "
       "old 1.0 vs new 2.0 (|diff| 1)"),
      ("variable_shape", "model.ckpt-10: w", "old [2] vs new [3]")]
  assert notes == ["the first checkpoints are at different steps (old 0, "
                   "new 5), so the start point could not be compared"]


def test_state_files_that_differ(tmp_path):
  old, new = str(tmp_path / "old"), str(tmp_path / "new")
  for model_dir in (old, new):
    for step in (0, 10, 20):
      _write(model_dir, step, {"w": np.full(2, step, np.float32)})
  _state(old, [0, 10, 20])
  _state(new, [0, 10])
  differences, notes, both = checkpoints.compare(old, new, 1e-6, 1e-6)
  assert (both, notes) == (3, [])
  assert _found(differences) == [
      ("checkpoint_state", "checkpoint",
       "model_checkpoint_path old model.ckpt-20 vs new model.ckpt-10"),
      ("checkpoint_state", "checkpoint",
       "all_model_checkpoint_paths old ['model.ckpt-0', 'model.ckpt-10', "
       "'model.ckpt-20'] vs new ['model.ckpt-0', 'model.ckpt-10']")]
  # A state file TensorFlow cannot read is named as such.
  with open(os.path.join(new, "checkpoint"), "w") as f:
    f.write("not a CheckpointState {")
  differences, _, _ = checkpoints.compare(old, new, 1e-6, 1e-6)
  assert _found(differences) == [
      ("checkpoint_state", "checkpoint",
       "model_checkpoint_path old model.ckpt-20 vs new (unreadable)"),
      ("checkpoint_state", "checkpoint",
       "all_model_checkpoint_paths old ['model.ckpt-0', 'model.ckpt-10', "
       "'model.ckpt-20'] vs new []")]
