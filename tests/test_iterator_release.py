"""A finished call's input iterator is destroyed on the release thread.

Tearing a tf.data iterator down waits for its pipeline's threads (0.1-0.2 s
of wall time in about half of the calls, docs/speed.md); the function
engine hands the iterator to iterator_release.py's thread so that the call
does not wait for it.
"""

import gc
import threading
import weakref

import pytest

from estimator_compat.engines.function import iterator_release
from estimator_compat.engines.function import traced_model
from tests import models


def test_let_go_drops_the_object_on_the_release_thread():
  died_on = []

  class Held:
    pass

  held = Held()
  ref = weakref.ref(held, lambda _: died_on.append(
      threading.current_thread().name))
  holder = [held]
  del held
  iterator_release.let_go(holder)
  assert iterator_release.wait(timeout=30)
  assert ref() is None
  assert holder == []
  assert died_on == ["estimator_compat-release"]


def test_wait_returns_at_once_with_nothing_handed_over():
  assert iterator_release.wait(timeout=5)


@pytest.mark.parametrize("call", ["train", "evaluate", "predict"])
def test_a_calls_iterator_is_destroyed_on_the_release_thread(
    tmp_path, monkeypatch, call):
  """The call hands over its iterator, and the handover is its last reference
  (with the cycle collector off, nothing else could drop it later)."""
  est = models.estimator(tmp_path, engine="function",
                         log_step_count_steps=None, save_summary_steps=None)
  est.train(models.input_fn(), steps=1)
  handed, died_on = [], []
  original = iterator_release.let_go

  def spy(holder):
    for item in holder:
      if item is not None:
        handed.append(weakref.ref(item, lambda _: died_on.append(
            threading.current_thread().name)))
    original(holder)

  monkeypatch.setattr(traced_model.iterator_release, "let_go", spy)
  gc.collect()
  gc.disable()
  try:
    if call == "train":
      est.train(models.input_fn(), steps=2)
    elif call == "evaluate":
      est.evaluate(models.input_fn(num_epochs=1), steps=2)
    else:
      list(est.predict(models.input_fn(num_epochs=1, labels=False)))
    assert iterator_release.wait(timeout=60)
  finally:
    gc.enable()
  assert len(handed) == 1
  assert handed[0]() is None
  assert died_on == ["estimator_compat-release"]
