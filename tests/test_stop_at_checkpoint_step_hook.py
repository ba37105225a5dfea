"""A non-chief's StopAtCheckpointStepHook (in_training/checkpoint_step_hook.py).

It stops once the chief's newest checkpoint reached last_step and waits
between reads until then; its argument errors are TF 2.15's words.
"""

import pytest
import tensorflow as tf

from estimator_compat.in_training import checkpoint_step_hook
from estimator_compat.in_training.checkpoint_step_hook import (
    StopAtCheckpointStepHook)


class _Context:
  stopped = False

  def request_stop(self):
    self.stopped = True


class _Values:

  def __init__(self, results):
    self.results = results


@pytest.fixture
def saved_step(monkeypatch):
  step = {"value": 0, "reads": 0, "slept": []}

  def global_step_of(path):
    assert path == "newest"
    step["reads"] += 1
    return step["value"]

  reading = checkpoint_step_hook.checkpoint_reading
  monkeypatch.setattr(reading, "latest_checkpoint", lambda model_dir: "newest")
  monkeypatch.setattr(reading, "global_step_of", global_step_of)
  monkeypatch.setattr(checkpoint_step_hook.time, "sleep",
                      step["slept"].append)
  return step


def test_arguments_must_be_given():
  with pytest.raises(ValueError, match="^last_step must be specified.$"):
    StopAtCheckpointStepHook("/tmp/m", None)
  with pytest.raises(ValueError, match="^model_dir must be specified.$"):
    StopAtCheckpointStepHook(None, 5)


def test_before_last_step_the_checkpoint_is_not_read(saved_step):
  hook = StopAtCheckpointStepHook("/tmp/m", 5)
  context = _Context()
  hook.after_run(context, _Values(2))
  assert not context.stopped and saved_step["reads"] == 0


def test_a_worker_waits_for_the_chiefs_checkpoint_then_stops(saved_step):
  hook = StopAtCheckpointStepHook("/tmp/m", 5, wait_after_file_check_secs=7)
  context = _Context()
  saved_step["value"] = 3
  hook.after_run(context, _Values(4))
  assert not context.stopped and saved_step["slept"] == [7]
  saved_step["value"] = 5
  hook.after_run(context, _Values(9))
  assert context.stopped and saved_step["slept"] == [7]


def test_begin_needs_a_global_step():
  with tf.Graph().as_default():
    with pytest.raises(RuntimeError, match="Global step should be created to "
                       "use StopAtCheckpointStepHook. Fix:"):
      StopAtCheckpointStepHook("/tmp/m", 5).begin()
    tf.compat.v1.train.create_global_step()
    hook = StopAtCheckpointStepHook("/tmp/m", 5)
    hook.begin()
    assert hook.before_run(None).fetches is not None
