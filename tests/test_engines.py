"""Engine choice, and checkpoints moving between the two engines."""

import numpy as np
import pytest

import estimator_compat as tfe
from tests import models


def _train(model_dir, engine, steps):
  est = models.estimator(model_dir, engine=engine)
  est.train(models.input_fn(), steps=steps)
  return est


@pytest.mark.parametrize("first,second", [("graph", "function"),
                                          ("function", "graph")])
def test_resume_on_the_other_engine_matches_one_engine_run(tmp_path, first,
                                                           second):
  # 1 + 24 steps on one engine, 25 more on the other...
  _train(tmp_path / "mixed", first, 1)
  _train(tmp_path / "mixed", first, 24)
  mixed = _train(tmp_path / "mixed", second, 25)
  assert mixed.get_variable_value("global_step") == 50
  for engine in ("graph", "function"):
    single = tmp_path / f"single_{engine}"
    # ...equals 49 steps on either engine from the same model.ckpt-1.
    single.mkdir()
    for f in (tmp_path / "mixed").iterdir():
      if f.name.startswith("model.ckpt-1."):
        (single / f.name).write_bytes(f.read_bytes())
    (single / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-1"\n')
    ref = _train(single, engine, 49)
    assert ref.get_variable_value("global_step") == 50
    for name in mixed.get_variable_names():
      np.testing.assert_allclose(mixed.get_variable_value(name),
                                 ref.get_variable_value(name), rtol=1e-5,
                                 atol=1e-6, err_msg=f"{name} ({engine})")


def test_engine_choice(monkeypatch):
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  assert tfe.RunConfig().engine == "function"
  assert tfe.RunConfig(engine="graph").engine == "graph"
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "graph")
  assert tfe.RunConfig().engine == "graph"
  assert tfe.RunConfig(engine="function").engine == "function"
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "turbo")
  with pytest.raises(ValueError, match="Unknown engine 'turbo'.*"
                     "ESTIMATOR_COMPAT_ENGINE"):
    tfe.RunConfig()
  with pytest.raises(ValueError, match="Unknown engine 'fast'"):
    tfe.RunConfig(engine="fast")


def test_function_engine_refuses_session_only_hooks(tmp_path):
  est = models.estimator(tmp_path, engine="function")
  hook = tfe.CheckpointSaverHook(str(tmp_path), save_steps=1)
  with pytest.raises(ValueError, match="CheckpointSaverHook needs a TF1 "
                     "Session.*saving_listeners.*engine='graph'"):
    est.train(models.input_fn(), hooks=[hook], steps=1)
  assert models.checkpoint_files(str(tmp_path)) == []


def test_eval_model_fn_with_train_op_does_not_train_on_function_engine(
    tmp_path):
  est = models.estimator(tmp_path, engine="function")
  est.train(models.input_fn(), steps=3)
  before = est.get_variable_value("dense/kernel")

  def model_fn(features, labels, mode, params):
    # Builds the train_op in every mode, as much legacy code does.
    spec = models.classifier_fn(features, labels, tfe.ModeKeys.TRAIN, params)
    if mode == tfe.ModeKeys.TRAIN:
      return spec
    return tfe.EstimatorSpec(mode, loss=spec.loss,
                             predictions=spec.predictions)

  evaluator = models.estimator(tmp_path, engine="function", model_fn=model_fn)
  result = evaluator.evaluate(models.input_fn(num_epochs=1))
  assert result["global_step"] == 3
  np.testing.assert_array_equal(est.get_variable_value("dense/kernel"), before)
