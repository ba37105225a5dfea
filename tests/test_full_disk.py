"""A full disk: the save that fails names its file; freeing space resumes."""

import os

import pytest
import tensorflow as tf

from tests import models


def _kept(model_dir):
  state = tf.train.get_checkpoint_state(model_dir)
  return list(state.all_model_checkpoint_paths)


def test_full_disk_fails_at_a_save_and_resumes_once_space_is_freed(
    tmpfs, engine):
  del engine
  mount, remount = tmpfs
  remount("size=600k")  # room for a dozen checkpoints of this model
  model_dir = str(mount / "model")
  config = dict(save_checkpoints_steps=5, keep_checkpoint_max=50)
  with pytest.raises((tf.errors.ResourceExhaustedError, OSError)) as raised:
    models.estimator(model_dir, **config).train(models.input_fn(),
                                                max_steps=200)
  message = str(raised.value)
  assert "No space left on device" in message and model_dir in message
  # What the state file names is whole: the next run can restore it.
  newest = tf.train.latest_checkpoint(model_dir)
  saved = int(tf.train.load_checkpoint(newest).get_tensor("global_step"))
  assert 0 < saved < 200
  remount("size=50m")
  est = models.estimator(model_dir, **config)
  est.train(models.input_fn(), max_steps=200)
  assert est.get_variable_value("global_step") == 200
  assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-200")
  assert all(tf.compat.v1.train.checkpoint_exists(path) for path in _kept(model_dir))
  assert not [f for f in os.listdir(model_dir)
              if "tempstate" in f or "_temp" in f or ".tmp" in f]
