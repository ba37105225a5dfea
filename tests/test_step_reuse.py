"""evaluate()/predict() calls that reuse an earlier call's step functions.

A later call whose model_fn traces the very same graph takes the earlier
call's pruned steps and loops (engines/function/step_reuse.py) instead of
pruning and tracing them again. What each call computes stays per call: the
restore of the latest checkpoint, the metric variables, the random streams,
the input iterator. Each case compares with one batch per call
(steps_per_loop=1) and checks that the reuse took place.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

from estimator_compat.engines import controller
from estimator_compat.engines.function import step_reuse
from estimator_compat.engines.function.traced_model import TracedModel
from tests import models

ROWS, BATCH = 80, 8  # 10 batches.


def _input_fn():
  x, y = models.data(ROWS)
  return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(BATCH)


@pytest.fixture(name="reused")
def _reused(monkeypatch):
  """Per evaluation or prediction call: whether it took kept steps."""
  monkeypatch.setattr(controller, "SINGLE_BATCHES_FIRST", 0)
  monkeypatch.setattr(step_reuse, "_KEPT", {})  # None from other tests.
  reused = []
  original = TracedModel._adopt  # pylint: disable=protected-access

  def adopt(self, kept):
    if self._reuse_key is not None:  # pylint: disable=protected-access
      reused.append(kept is not None)
    return original(self, kept)

  monkeypatch.setattr(TracedModel, "_adopt", adopt)
  return reused


@pytest.fixture(name="prunes")
def _prunes(monkeypatch):
  """How many functions were pruned from a trace so far."""
  prunes = []
  original = TracedModel._prune_wrapped  # pylint: disable=protected-access

  def counted(self, feeds, fetches):
    prunes.append(1)
    return original(self, feeds, fetches)

  monkeypatch.setattr(TracedModel, "_prune_wrapped", counted)
  return prunes


def _assert_equal(got, want):
  assert sorted(got) == sorted(want)
  for key in want:
    np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_evaluations_see_each_new_checkpoint(tmp_path, reused):
  batched = models.estimator(tmp_path, engine="function")
  single = models.estimator(tmp_path, engine="function", steps_per_loop=1)
  seen = []
  for _ in range(3):
    batched.train(models.input_fn(), steps=2)
    got = batched.evaluate(_input_fn)
    _assert_equal(got, single.evaluate(_input_fn))
    seen.append(got)
  # Each call read the checkpoint written just before it.
  assert [int(r["global_step"]) for r in seen] == [2, 4, 6]
  assert len({float(r["loss"]) for r in seen}) == 3
  # The batched calls after the first took the first's steps.
  assert reused == [False, True, True, True, True, True]


def test_metrics_start_from_zero_in_each_call(tmp_path, reused, prunes):
  est = models.estimator(tmp_path, engine="function")
  est.train(models.input_fn(), steps=2)
  first = est.evaluate(_input_fn, steps=7)
  pruned = len(prunes)
  second = est.evaluate(_input_fn, steps=7)
  assert reused == [False, True]
  assert len(prunes) == pruned  # The second call pruned nothing.
  _assert_equal(second, first)
  single = models.estimator(tmp_path, engine="function", steps_per_loop=1)
  _assert_equal(second, single.evaluate(_input_fn, steps=7))


def _noisy_fn(features, labels, mode, params):
  if mode != "infer":
    return models.classifier_fn(features, labels, mode, params)
  hidden = tf.compat.v1.layers.dense(features["x"], 8, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(hidden, models.CLASSES)
  # A TF1 random op: one stream across the call's batches, started again by
  # each call (the Estimator made a new Session per call).
  return tfe.EstimatorSpec(
      mode, predictions={"logits": logits,
                         "noise": tf.random.uniform([BATCH], seed=3)})


def test_predictions_restart_the_random_stream_per_call(tmp_path, reused):
  est = models.estimator(tmp_path, model_fn=_noisy_fn, engine="function")
  est.train(models.input_fn(), steps=2)
  calls = [list(est.predict(_input_fn, yield_single_examples=False))
           for _ in range(2)]
  assert reused == [False, True]
  single = models.estimator(tmp_path, model_fn=_noisy_fn, engine="function",
                            steps_per_loop=1)
  want = list(single.predict(_input_fn, yield_single_examples=False))
  for got in calls:
    assert len(got) == len(want) == ROWS // BATCH
    for got_batch, want_batch in zip(got, want):
      _assert_equal(got_batch, want_batch)
  # The stream went on across a call's batches.
  assert len({tuple(b["noise"]) for b in want}) == len(want)


def test_a_kernel_state_op_is_never_kept(tmp_path, reused):
  def model_fn(features, labels, mode, params):
    if mode != "infer":
      return models.classifier_fn(features, labels, mode, params)
    # Its state lives in its kernel: a kept function would go on drawing
    # where the previous call stopped.
    draw = tf.random.categorical(tf.zeros([1, 50]), 1, seed=3)[0]
    return tfe.EstimatorSpec(
        mode, predictions={"draw": draw + tf.cast(features["x"][:, 0] > 9,
                                                  tf.int64)})

  est = models.estimator(tmp_path, model_fn=model_fn, engine="function")
  est.train(models.input_fn(), steps=2)
  first, second = [list(est.predict(_input_fn, yield_single_examples=False))
                   for _ in range(2)]
  assert not reused
  for a, b in zip(first, second):
    _assert_equal(a, b)
