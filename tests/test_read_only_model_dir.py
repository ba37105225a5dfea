"""evaluate() on a read-only model_dir refuses instead of losing summaries."""

import os

import pytest

from tests import models


def test_evaluate_on_a_read_only_model_dir_names_the_fix(tmpfs, engine,
                                                         tmp_path):
  del engine
  mount, remount = tmpfs
  estimator = models.estimator(mount / "model")
  estimator.train(models.input_fn(), steps=2)
  estimator.evaluate(models.input_fn(num_epochs=1))  # eval/ exists: silent
  remount("ro")
  with pytest.raises(PermissionError, match="eval.*Fix: .*checkpoint_path"):
    estimator.evaluate(models.input_fn(num_epochs=1))
  # The fix works: a writable model_dir, the read-only checkpoint.
  elsewhere = models.estimator(tmp_path / "writable")
  results = elsewhere.evaluate(models.input_fn(num_epochs=1),
                               checkpoint_path=estimator.latest_checkpoint())
  assert results["global_step"] == 2
  assert os.listdir(tmp_path / "writable" / "eval")
