"""RunConfig(jit_compile=True): XLA-compiled steps, the same model."""

import numpy as np
import pytest

import estimator_compat as tfe
from tests import models


def test_jit_compile_trains_the_same_weights(tmp_path):
  results = {}
  for jit in (False, True):
    est = models.estimator(tmp_path / str(jit), engine="function",
                           jit_compile=jit)
    est.train(models.input_fn(), steps=20)
    results[jit] = est
    assert est.config.jit_compile is jit
  metrics = {jit: est.evaluate(models.input_fn(num_epochs=1))
             for jit, est in results.items()}
  for name in results[False].get_variable_names():
    np.testing.assert_allclose(results[True].get_variable_value(name),
                               results[False].get_variable_value(name),
                               rtol=1e-5, atol=1e-6, err_msg=name)
  np.testing.assert_allclose(metrics[True]["loss"], metrics[False]["loss"],
                             rtol=1e-5)
  predictions = [list(est.predict(models.input_fn(num_epochs=1,
                                                  labels=False)))
                 for est in results.values()]
  np.testing.assert_allclose(
      [p["probabilities"] for p in predictions[1]],
      [p["probabilities"] for p in predictions[0]], rtol=1e-5, atol=1e-6)


def test_jit_compile_is_a_function_engine_setting(tmp_path):
  with pytest.raises(ValueError, match="jit_compile must be True or False"):
    tfe.RunConfig(jit_compile=1)
  est = models.estimator(tmp_path, engine="graph", jit_compile=True)
  with pytest.raises(ValueError, match=r"jit_compile=True\) needs the "
                     "function engine"):
    est.train(models.input_fn(), steps=2)
  assert models.checkpoint_files(str(tmp_path)) == []
