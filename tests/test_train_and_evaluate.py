"""train_and_evaluate (local mode), TrainSpec/EvalSpec, exporters.

Cluster roles are tested in test_cluster.py and test_strategies.py.
"""


import pytest

import estimator_compat as tfe
from tests import models

pytestmark = pytest.mark.usefixtures("engine")


class _RecordingExporter(tfe.Exporter):

  def __init__(self):
    self.calls = []

  @property
  def name(self):
    return "recording"

  def export(self, estimator, export_path, checkpoint_path, eval_result,
             is_the_final_export):
    self.calls.append((export_path, checkpoint_path,
                       int(eval_result["global_step"]), is_the_final_export))
    return export_path


def test_evaluates_after_each_checkpoint_and_at_the_end(tmp_path):
  est = models.estimator(tmp_path, save_checkpoints_steps=4)
  exporter = _RecordingExporter()
  metrics, exports = tfe.train_and_evaluate(
      est,
      tfe.TrainSpec(models.input_fn(), max_steps=10),
      tfe.EvalSpec(models.input_fn(num_epochs=1), steps=None,
                   exporters=exporter, throttle_secs=0))
  assert metrics["global_step"] == 10
  assert sorted(metrics) == ["accuracy", "global_step", "loss"]
  # Saves at 0 (skipped: untrained), 4, 8 and 10 (the final one).
  assert [call[2] for call in exporter.calls] == [4, 8, 10]
  assert exporter.calls[-1][0] == str(tmp_path / "export" / "recording")
  assert exports == [str(tmp_path / "export" / "recording")]
  eval_steps = [step for step, _ in models.events(est.eval_dir())["loss"]]
  assert eval_steps == [4, 8, 10]


def test_throttle_limits_evaluations(tmp_path):
  est = models.estimator(tmp_path, save_checkpoints_steps=2)
  metrics, exports = tfe.train_and_evaluate(
      est, tfe.TrainSpec(models.input_fn(), max_steps=6),
      tfe.EvalSpec(models.input_fn(num_epochs=1), name="val",
                   throttle_secs=3600))
  assert exports == []
  assert metrics["global_step"] == 6
  eval_steps = [s for s, _ in models.events(est.eval_dir("val"))["loss"]]
  assert eval_steps == [6]


def test_resumed_run_with_max_steps_reached_still_evaluates(tmp_path):
  est = models.estimator(tmp_path)
  est.train(models.input_fn(), max_steps=3)
  metrics, _ = tfe.train_and_evaluate(
      est, tfe.TrainSpec(models.input_fn(), max_steps=3),
      tfe.EvalSpec(models.input_fn(num_epochs=1)))
  assert metrics["global_step"] == 3


def test_spec_validation():
  with pytest.raises(TypeError, match="`input_fn` must be callable"):
    tfe.TrainSpec(input_fn=None)
  with pytest.raises(ValueError, match="Must specify max_steps > 0"):
    tfe.TrainSpec(models.input_fn(), max_steps=0)
  with pytest.raises(ValueError, match="Must specify steps > 0"):
    tfe.EvalSpec(models.input_fn(), steps=0)
  spec = tfe.EvalSpec(models.input_fn())
  assert (spec.steps, spec.start_delay_secs, spec.throttle_secs) == (100, 120,
                                                                     600)
  with pytest.raises(TypeError, match="Estimator"):
    tfe.train_and_evaluate(object(), tfe.TrainSpec(models.input_fn()), spec)
