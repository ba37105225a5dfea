"""Engine choice, and checkpoints moving between the two engines."""

import numpy as np
import pytest

import estimator_compat as tfe
from tests import models


def _train(model_dir, engine, steps):
  est = models.estimator(model_dir, engine=engine)
  # 80 rows in batches of 16: 50 steps are whole epochs, so a resumed call
  # (whose input starts over, as in the Estimator) reads the same batches.
  est.train(models.input_fn(rows=80), steps=steps)
  return est


@pytest.mark.parametrize("first,second", [("graph", "function"),
                                          ("function", "graph")])
def test_50_steps_on_one_engine_then_50_on_the_other_equals_100(tmp_path,
                                                                  first,
                                                                  second):
  _train(tmp_path / "mixed", first, 50)
  mixed = _train(tmp_path / "mixed", second, 50)
  assert mixed.get_variable_value("global_step") == 100
  for engine in ("graph", "function"):
    # 100 steps on one engine from the same model.ckpt-0.
    single = tmp_path / f"single_{engine}"
    single.mkdir()
    for f in (tmp_path / "mixed").iterdir():
      if f.name.startswith("model.ckpt-0."):
        (single / f.name).write_bytes(f.read_bytes())
    (single / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-0"\n')
    ref = _train(single, engine, 100)
    assert ref.get_variable_value("global_step") == 100
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


class _CallCounter(tfe.SessionRunHook):

  def __init__(self):
    self.steps_seen = []

  def begin(self):
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    self._step = tf.compat.v1.train.get_global_step()

  def after_run(self, run_context, run_values):
    self.steps_seen.append(int(run_context.session.run(self._step)))


def test_steps_per_loop_gives_the_same_model_and_cuts_at_steps(tmp_path):
  results = {}
  for spl in (1, 5):
    counter = _CallCounter()
    est = models.estimator(tmp_path / str(spl), engine="function",
                           steps_per_loop=spl, save_checkpoints_steps=10)
    est.train(models.input_fn(), steps=23, hooks=[counter])
    assert est.get_variable_value("global_step") == 23
    results[spl] = est
    if spl == 5:  # One hook run per call; the last call is cut to 3 steps.
      assert counter.steps_seen == [5, 10, 15, 20, 23]
    steps = sorted(int(f.name.split("-")[1].split(".")[0])
                   for f in (tmp_path / str(spl)).iterdir()
                   if f.name.endswith(".index"))
    assert steps == [0, 10, 20, 23]
  for name in results[1].get_variable_names():
    np.testing.assert_allclose(results[5].get_variable_value(name),
                               results[1].get_variable_value(name),
                               rtol=1e-5, atol=1e-6, err_msg=name)


def test_steps_per_loop_stops_at_end_of_input(tmp_path):
  est = models.estimator(tmp_path, engine="function", steps_per_loop=4)
  est.train(models.input_fn(batch_size=32, num_epochs=1, rows=70), steps=100)
  # 3 batches: the call that hits the end keeps the steps it ran.
  assert est.get_variable_value("global_step") == 3


def test_steps_per_loop_validation(tmp_path):
  with pytest.raises(ValueError, match="steps_per_loop must be an integer"):
    tfe.RunConfig(steps_per_loop=0)
  est = models.estimator(tmp_path, engine="graph", steps_per_loop=5)
  with pytest.raises(ValueError, match="needs the function engine"):
    est.train(models.input_fn(), steps=5)
  assert models.checkpoint_files(str(tmp_path)) == []
