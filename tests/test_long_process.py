"""One process calling train/evaluate/predict again and again (issue 28).

The OS threads of a call's input pipeline end with the call: before the
fix every function engine call left its input iterator (4 threads for a
numpy_input_fn) to Python's cycle collector, and 200 rounds grew to 120
threads. The check runs with the collector off, so that only what the call
itself releases counts.
"""

import gc
import os
import threading

import pytest
import tensorflow as tf

from estimator_compat.engines.function import iterator_release
from tests import models


def _os_threads() -> int:
  return len(os.listdir("/proc/self/task"))


def _round(model_dir, engine):
  est = models.estimator(model_dir, engine=engine, log_step_count_steps=None,
                         save_summary_steps=None)
  est.train(models.input_fn(), steps=3)
  est.evaluate(models.input_fn(num_epochs=1), steps=2)
  list(est.predict(models.input_fn(num_epochs=1, labels=False)))
  # A caller that stops after one prediction ends the call too.
  predictions = est.predict(models.input_fn(num_epochs=1, labels=False))
  next(predictions)
  predictions.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"),
                    reason="counts threads in /proc")
@pytest.mark.parametrize("engine", ["function", "graph"])
def test_threads_end_with_each_call(tmp_path, engine):
  _round(tmp_path, engine)  # TensorFlow's own pools start on first use.
  gc.collect()
  before = _os_threads()
  gc.disable()
  try:
    for _ in range(2):
      _round(tmp_path, engine)
    # The function engine's iterators end on the release thread, just after
    # their calls (iterator_release.py).
    assert iterator_release.wait(timeout=60)
    after = _os_threads()
  finally:
    gc.enable()
  # (2 rounds of 5 calls held about 2 * 16 more threads before the fix.)
  assert after <= before + 2, (before, after)


class _WaitForEvaluations(tf.compat.v1.train.SessionRunHook):
  """A training hook that waits, inside train(), for evaluations to end."""

  def __init__(self, finished, wanted):
    self._finished = finished
    self._wanted = wanted
    self.seen = None

  def after_run(self, run_context, run_values):
    del run_context, run_values
    if self.seen is not None:
      return
    with self._finished:
      start = self._finished.count
      self._finished.wait_for(
          lambda: self._finished.count >= start + self._wanted, timeout=120)
      self.seen = self._finished.count - start


@pytest.mark.parametrize("engine", ["function", "graph"])
def test_evaluate_runs_while_train_runs(tmp_path, engine):
  """evaluate() in a thread completes while train() of the same Estimator
  is in the middle of its steps (it waited for train to end, issue 28)."""
  est = models.estimator(tmp_path, engine=engine, log_step_count_steps=None,
                         save_summary_steps=None)
  est.train(models.input_fn(), steps=2)
  finished = threading.Condition()
  finished.count = 0
  stop = threading.Event()
  errors = []

  def evaluations():
    while not stop.is_set():
      try:
        est.evaluate(models.input_fn(num_epochs=1), steps=1)
      except Exception as error:  # pylint: disable=broad-except
        errors.append(error)
        return
      with finished:
        finished.count += 1
        finished.notify_all()

  thread = threading.Thread(target=evaluations)
  thread.start()
  waiting = _WaitForEvaluations(finished, wanted=2)
  try:
    est.train(models.input_fn(), steps=3, hooks=[waiting])
  finally:
    stop.set()
    thread.join()
  assert not errors, errors
  assert waiting.seen is not None and waiting.seen >= 2, waiting.seen
