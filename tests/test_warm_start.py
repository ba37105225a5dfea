"""warm_start_from: a path or WarmStartSettings, only into an empty model_dir."""

import pytest
import numpy as np

import estimator_compat as tfe
from tests import models

pytestmark = pytest.mark.usefixtures("engine")


def _source(tmp_path):
  est = models.estimator(tmp_path / "source", params={"learning_rate": 0.5})
  est.train(models.input_fn(), steps=5)
  return est


def test_warm_start_from_path_copies_all_variables(tmp_path):
  source = _source(tmp_path)
  target = tfe.Estimator(models.classifier_fn,
                         model_dir=str(tmp_path / "target"),
                         config=tfe.RunConfig(tf_random_seed=99),
                         params={"learning_rate": 0.0},
                         warm_start_from=str(tmp_path / "source"))
  target.train(models.input_fn(), steps=1)
  for name in ("dense/kernel", "dense/bias", "dense_1/kernel"):
    np.testing.assert_allclose(target.get_variable_value(name),
                               source.get_variable_value(name))
  assert target.get_variable_value("global_step") == 1  # step is not copied


def test_warm_start_settings_select_variables(tmp_path):
  source = _source(tmp_path)
  settings = tfe.WarmStartSettings(
      ckpt_to_initialize_from=source.latest_checkpoint(),
      vars_to_warm_start="dense/.*")
  target = tfe.Estimator(models.classifier_fn,
                         model_dir=str(tmp_path / "target"),
                         config=tfe.RunConfig(tf_random_seed=99),
                         params={"learning_rate": 0.0},
                         warm_start_from=settings)
  target.train(models.input_fn(), steps=1)
  np.testing.assert_allclose(target.get_variable_value("dense/kernel"),
                             source.get_variable_value("dense/kernel"))
  assert not np.allclose(target.get_variable_value("dense_1/kernel"),
                         source.get_variable_value("dense_1/kernel"))


def test_existing_checkpoint_wins_over_warm_start(tmp_path):
  source = _source(tmp_path)
  own = models.estimator(tmp_path / "own", params={"learning_rate": 0.0})
  own.train(models.input_fn(), steps=1)
  own_kernel = own.get_variable_value("dense/kernel")
  again = tfe.Estimator(models.classifier_fn, model_dir=str(tmp_path / "own"),
                        params={"learning_rate": 0.0},
                        warm_start_from=source.model_dir)
  again.train(models.input_fn(), steps=1)
  np.testing.assert_allclose(again.get_variable_value("dense/kernel"),
                             own_kernel)
