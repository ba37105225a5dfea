"""TF's standard hooks passed by the user to train(), on every engine.

Found by the differential generator (finding G1): a user's
`StepCounterHook` failed on the default engine with "Tensor.op is undefined
when eager execution is enabled" (its begin() names the summary tag after
`global_step.op`), while the Estimator trained.
"""

import logging as py_logging

import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.errors import NeedsGraphEngine
from tests import models


class _GlobalStepOpHook(tf.compat.v1.train.SessionRunHook):
  """A user hook that reads `get_global_step().op.name` in begin()."""

  def begin(self):
    self.op_name = tf.compat.v1.train.get_global_step().op.name


@pytest.mark.parametrize("engine", [None, "function", "graph"])
def test_user_step_counter_hook_trains(tmp_path, engine):
  config = {} if engine is None else {"engine": engine}
  est = models.estimator(tmp_path, **config)
  hook = tfe.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path / "sc"))
  est.train(models.input_fn(), steps=6, hooks=[hook])
  assert est.get_variable_value("global_step") == 6
  assert hook._summary_tag == "global_step/sec"  # pylint: disable=protected-access
  # It wrote its rate where it was told, at its cadence, as in a TF1 graph.
  tags = set()
  for path in tf.io.gfile.glob(str(tmp_path / "sc" / "events.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      tags.update(v.tag for v in event.summary.value)
  assert "global_step/sec" in tags


def test_hook_needing_a_graph_global_step_reroutes_by_default(tmp_path,
                                                              caplog):
  est = models.estimator(tmp_path)
  hook = _GlobalStepOpHook()
  with caplog.at_level(py_logging.INFO):
    est.train(models.input_fn(), steps=3, hooks=[hook])
  assert hook.op_name == "global_step"
  assert est.get_variable_value("global_step") == 3
  assert "graph engine" in caplog.text


def test_hook_needing_a_graph_global_step_on_chosen_function_engine(tmp_path):
  est = models.estimator(tmp_path, engine="function")
  with pytest.raises(NeedsGraphEngine, match=r"_GlobalStepOpHook.begin\(\)"):
    est.train(models.input_fn(), steps=3, hooks=[_GlobalStepOpHook()])
  assert not models.checkpoint_files(str(tmp_path))


@pytest.mark.parametrize("engine", [None, "function", "graph"])
def test_a_mock_hook_is_called_as_by_the_estimator(tmp_path, engine):
  # The Estimator's own tests pass mock.MagicMock(wraps=...) hooks, whose
  # class has no `begin` attribute.
  from unittest import mock  # pylint: disable=g-import-not-at-top
  config = {} if engine is None else {"engine": engine}
  est = models.estimator(tmp_path, **config)
  hook = mock.MagicMock(wraps=tf.compat.v1.train.SessionRunHook(),
                        spec=tf.compat.v1.train.SessionRunHook)
  est.train(models.input_fn(), steps=2, hooks=[hook])
  assert hook.begin.called and hook.end.called
  assert est.get_variable_value("global_step") == 2
