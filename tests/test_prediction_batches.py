"""predict() at steps_per_loop=None: many batches per call, the same output.

On the function engine, prediction batches that no hook observes run many
per call (TracedModel.predict_batches); what predict() yields must be what
one batch per call yields, value for value and type for type, and the first
prediction must still come after reading one batch.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.engines import controller
from estimator_compat.engines.function.traced_model import TracedModel
from tests import models

ROWS, BATCH = 100, 16  # 7 batches, the last of 4 rows.


def _predicting(predictions_fn):
  """classifier_fn whose PREDICT mode returns predictions_fn(x, logits)."""

  def model_fn(features, labels, mode, params):
    if mode != tfe.ModeKeys.PREDICT:
      return models.classifier_fn(features, labels, mode, params)
    x = features["x"]
    hidden = tf.compat.v1.layers.dense(x, 8, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(hidden, models.CLASSES)
    return tfe.EstimatorSpec(mode, predictions=predictions_fn(x, logits))

  return model_fn


def _several_kinds(x, logits):
  """Predictions of several dtypes and ranks."""
  classes = tf.argmax(logits, axis=1)
  return {
      "class": classes,
      "probabilities": tf.nn.softmax(logits),
      "name": tf.strings.as_string(classes),
      "window": tf.reshape(tf.tile(x, [1, 2]), [-1, 2, models.DIM]),
      "rows_in_batch": tf.shape(x)[0],  # One value per batch (rank 0).
  }


_model_fn = _predicting(_several_kinds)


def _input_fn():
  x, _ = models.data(ROWS)
  return tf.data.Dataset.from_tensor_slices({"x": x}).batch(BATCH)


@pytest.fixture(name="calls")
def _calls(monkeypatch):
  """The num_batches of each TracedModel.predict_batches call.

  These 7-batch runs batch from the second batch on (a real predict() runs
  SINGLE_BATCHES_FIRST batches one per call first), so that what batching
  yields is compared with one batch per call.
  """
  monkeypatch.setattr(controller, "SINGLE_BATCHES_FIRST", 0)
  calls = []
  original = TracedModel.predict_batches

  def counted(self, num_batches):
    calls.append(num_batches)
    return original(self, num_batches)

  monkeypatch.setattr(TracedModel, "predict_batches", counted)
  return calls


def _predict(tmp_path, steps_per_loop, **kwargs):
  est = models.estimator(tmp_path, model_fn=_model_fn, engine="function",
                         steps_per_loop=steps_per_loop)
  if not tf.train.latest_checkpoint(str(tmp_path)):
    est.train(models.input_fn(), steps=3)
  return list(est.predict(_input_fn, **kwargs))


def _assert_same(automatic, one_per_call):
  assert len(automatic) == len(one_per_call)
  for got, want in zip(automatic, one_per_call):
    assert sorted(got) == sorted(want)
    for key in want:
      assert type(got[key]) == type(want[key]), key  # pylint: disable=unidiomatic-typecheck
      assert np.asarray(got[key]).dtype == np.asarray(want[key]).dtype, key
      np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_single_examples_are_those_of_one_batch_per_call(tmp_path, calls):
  keys = ["class", "probabilities", "name", "window"]
  automatic = _predict(tmp_path, None, predict_keys=keys)
  assert max(calls) > 1
  one_per_call = _predict(tmp_path, 1, predict_keys=keys)
  assert len(one_per_call) == ROWS
  _assert_same(automatic, one_per_call)


def test_whole_batches_are_those_of_one_batch_per_call(tmp_path, calls):
  automatic = _predict(tmp_path, None, yield_single_examples=False)
  assert max(calls) > 1
  one_per_call = _predict(tmp_path, 1, yield_single_examples=False)
  assert [b["rows_in_batch"] for b in one_per_call] == [16] * 6 + [4]
  _assert_same(automatic, one_per_call)


def test_the_first_prediction_reads_no_more_than_one_batch_per_call(
    tmp_path):
  models.estimator(tmp_path, model_fn=_model_fn).train(models.input_fn(),
                                                       steps=3)
  x, _ = models.data(ROWS)
  read = {}
  for steps_per_loop in (None, 1):
    starts = read.setdefault(steps_per_loop, [])

    def batches(starts=starts):
      for start in range(0, ROWS, BATCH):
        starts.append(start)
        yield {"x": x[start:start + BATCH]}

    def input_fn(batches=batches):
      return tf.data.Dataset.from_generator(
          batches, output_signature={"x": tf.TensorSpec([None, models.DIM],
                                                        tf.float32)})

    est = models.estimator(tmp_path, model_fn=_model_fn, engine="function",
                           steps_per_loop=steps_per_loop)
    first = next(iter(est.predict(input_fn, predict_keys=["class"])))
    assert set(first) == {"class"}
  # (from_generator itself may read one batch ahead, in its own thread.)
  for starts in read.values():
    assert starts in ([0], [0, BATCH]), read


def test_a_few_batches_run_one_per_call_with_no_batched_loop(tmp_path,
                                                            monkeypatch):
  # A predict() per request reads a few batches: tracing the batched loop
  # would cost more than it saves.
  batched = []
  original = TracedModel.predict_batches
  monkeypatch.setattr(TracedModel, "predict_batches",
                      lambda self, n: batched.append(n) or original(self, n))
  assert -(-ROWS // BATCH) < controller.SINGLE_BATCHES_FIRST
  automatic = _predict(tmp_path, None, yield_single_examples=False)
  assert not batched
  _assert_same(automatic, _predict(tmp_path, 1, yield_single_examples=False))


def test_a_hook_of_unknown_cadence_means_one_batch_per_call(tmp_path, calls):
  seen = []

  class _Hook(tf.compat.v1.train.SessionRunHook):

    def after_run(self, run_context, run_values):
      seen.append(1)

  est = models.estimator(tmp_path, model_fn=_model_fn, engine="function")
  est.train(models.input_fn(), steps=3)
  out = list(est.predict(_input_fn, hooks=[_Hook()],
                         yield_single_examples=False))
  assert not calls
  assert len(seen) == len(out) == 7


@pytest.mark.parametrize("draw, batched", [
    # A TF1 random op draws from a stream all step functions share
    # (random_streams.py): batched, the stream goes on as at one per call.
    (lambda: tf.random.uniform([2], seed=3), True),
    # A random op whose state stays in its kernel: a second function would
    # restart the stream, so one batch per call.
    (lambda: tf.cast(tf.random.categorical(tf.zeros([1, 50]), 2, seed=3)[0],
                     tf.float32), False),
])
def test_random_ops_in_the_model_draw_as_at_one_batch_per_call(
    tmp_path, calls, draw, batched):

  noisy_fn = _predicting(lambda x, logits: {"logits": logits,
                                            "noise": draw()})

  out = {}
  for steps_per_loop in (None, 1):
    est = models.estimator(tmp_path, model_fn=noisy_fn, engine="function",
                           steps_per_loop=steps_per_loop)
    if steps_per_loop is None:
      est.train(models.input_fn(), steps=3)
    out[steps_per_loop] = list(est.predict(_input_fn,
                                           yield_single_examples=False))
  assert bool(calls) == batched
  _assert_same(out[None], out[1])
  # The stream went on across calls: no two batches drew the same noise.
  assert len({tuple(b["noise"]) for b in out[1]}) == len(out[1]) == 7


def test_labels_in_the_input_cost_no_map(tmp_path, monkeypatch, calls):
  # predict() of a (features, labels) input drops the labels in the traced
  # model: no Dataset.map (a function trace per call) strips them first.
  # (Batched from the second batch on: `calls`.)
  x, y = models.data(ROWS)
  est = models.estimator(tmp_path, model_fn=_model_fn, engine="function")
  est.train(models.input_fn(), steps=3)
  maps = []
  original = tf.data.Dataset.map
  monkeypatch.setattr(tf.data.Dataset, "map",
                      lambda self, *a, **k: maps.append(1) or original(
                          self, *a, **k))
  with_labels = list(est.predict(
      lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(BATCH),
      yield_single_examples=False))
  assert not maps and calls
  _assert_same(with_labels, list(est.predict(
      _input_fn, yield_single_examples=False)))


def test_an_input_known_to_hold_many_batches_batches_from_the_first(
    tmp_path, monkeypatch):
  # tf.data knows the input holds more than SINGLE_BATCHES_FIRST batches:
  # the call will pay for the batched loop anyway.
  batches = controller.SINGLE_BATCHES_FIRST + 8
  x, _ = models.data(BATCH * batches)

  def input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": x}).batch(BATCH)

  single = []
  step = TracedModel.step
  monkeypatch.setattr(TracedModel, "step",
                      lambda self, keys=(), n=1: single.append(n) or step(
                          self, keys, n))
  out = {}
  for steps_per_loop in (None, 1):
    single.clear()
    est = models.estimator(tmp_path, model_fn=_model_fn, engine="function",
                           steps_per_loop=steps_per_loop)
    if steps_per_loop is None:
      est.train(models.input_fn(), steps=3)
    out[steps_per_loop] = list(est.predict(input_fn,
                                           yield_single_examples=False))
    if steps_per_loop is None:
      assert len(single) < controller.SINGLE_BATCHES_FIRST // 4, single
  assert len(out[1]) == batches
  _assert_same(out[None], out[1])
