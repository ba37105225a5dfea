"""Test setup: estimator_compat first, so tf.keras resolves to tf-keras."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import estimator_compat  # noqa: E402,F401  pylint: disable=g-import-not-at-top
import pytest  # noqa: E402  pylint: disable=g-import-not-at-top


@pytest.fixture(autouse=True)
def _no_tf_config(monkeypatch):
  """Tests start without a TF_CONFIG unless they set one."""
  monkeypatch.delenv("TF_CONFIG", raising=False)


@pytest.fixture(params=["graph", "function"])
def engine(request, monkeypatch):
  """Runs a test once per engine (through $ESTIMATOR_COMPAT_ENGINE)."""
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", request.param)
  return request.param
