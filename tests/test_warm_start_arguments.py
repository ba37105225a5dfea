"""Estimator(warm_start_from=...) and WarmStartSettings' argument checks.

Wording before our "Fix:" sentence as the real Estimator (TF 2.15) raised
it for the same calls.
"""

import pytest

import estimator_compat as ec


def _model_fn(features, labels, mode):
  del features, labels, mode


@pytest.mark.parametrize("path", ["", None])
def test_settings_need_a_checkpoint(path):
  with pytest.raises(ValueError) as raised:
    ec.WarmStartSettings(path)
  assert str(raised.value).startswith(
      "`ckpt_to_initialize_from` MUST be set in WarmStartSettings. Fix:")


def test_settings_fill_their_defaults():
  assert tuple(ec.WarmStartSettings("/tmp/ckpt")) == ("/tmp/ckpt", ".*", {},
                                                      {})


def test_warm_start_from_of_another_type_is_refused(tmp_path):
  with pytest.raises(ValueError) as raised:
    ec.Estimator(_model_fn, model_dir=str(tmp_path), warm_start_from=5)
  assert str(raised.value).startswith(
      "warm_start_from must be a string or a WarmStartSettings, instead got "
      "<class 'int'>. Fix:")


@pytest.mark.parametrize("given", ["/tmp/ckpt", b"/tmp/ckpt"])
def test_a_path_becomes_settings_that_warm_start_every_variable(tmp_path,
                                                               given):
  est = ec.Estimator(_model_fn, model_dir=str(tmp_path),
                     warm_start_from=given)
  settings = est._warm_start_settings  # pylint: disable=protected-access
  assert settings.ckpt_to_initialize_from == "/tmp/ckpt"
  assert settings.vars_to_warm_start == ".*"


def test_settings_pass_through_unchanged(tmp_path):
  settings = ec.WarmStartSettings("/tmp/ckpt", vars_to_warm_start="dense.*")
  est = ec.Estimator(_model_fn, model_dir=str(tmp_path),
                     warm_start_from=settings)
  assert est._warm_start_settings is settings  # pylint: disable=protected-access
