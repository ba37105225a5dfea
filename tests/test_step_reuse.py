"""train()/evaluate()/predict() calls that reuse an earlier call's steps.

A later call whose model_fn traces the very same graph takes the earlier
call's pruned steps and loops (engines/function/step_reuse.py) instead of
pruning and tracing them again. What each call computes stays per call: the
restore of the latest checkpoint, the metric variables, the random streams,
the input iterator. Each evaluation or prediction case compares with one
batch per call (steps_per_loop=1), each training case with the same calls
where nothing is kept (variables, events, what the hooks saw), and checks
that the reuse took place.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

from estimator_compat.mode_keys import ModeKeys
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
    if self._reuse_key is not None and self._mode != ModeKeys.TRAIN:  # pylint: disable=protected-access
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


# Training.


@pytest.fixture(name="train_reused")
def _train_reused(monkeypatch):
  """Per train() call: whether it took kept steps (None: none could be)."""
  monkeypatch.setattr(step_reuse, "_KEPT", {})
  reused = []
  original = TracedModel._adopt  # pylint: disable=protected-access

  def adopt(self, kept):
    if self._mode == ModeKeys.TRAIN:  # pylint: disable=protected-access
      reused.append(None if self._reuse_key is None else kept is not None)  # pylint: disable=protected-access
    return original(self, kept)

  monkeypatch.setattr(TracedModel, "_adopt", adopt)
  return reused


class _Seen(tf.compat.v1.train.SessionRunHook):
  """Records every hook call and the values it fetched, in order."""

  def __init__(self, calls):
    self._calls = calls

  def begin(self):
    self._calls.append("begin")
    kernel = [v for v in tf.compat.v1.trainable_variables()
              if "kernel" in v.name][0]
    self._fetch = {"step": tf.compat.v1.train.get_global_step(),
                   "w": kernel[0, 0],
                   "loss": tf.compat.v1.get_collection(
                       tf.compat.v1.GraphKeys.LOSSES)}

  def after_create_session(self, session, coord):
    del coord
    self._calls.append(("created", int(session.run(
        tf.compat.v1.train.get_global_step()))))

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(self._fetch)

  def after_run(self, run_context, run_values):
    self._calls.append(tf.nest.map_structure(
        lambda v: np.asarray(v).tobytes().hex(), run_values.results))

  def end(self, session):
    self._calls.append("end")


def _summarized_fn(features, labels, mode, params):
  """A classifier with dropout, a variable's summaries and a logging hook."""
  x = tf.compat.v1.layers.dense(features["x"], 8, activation=tf.nn.relu)
  x = tf.compat.v1.layers.dropout(x, 0.3, training=mode == "train")
  logits = tf.compat.v1.layers.dense(x, models.CLASSES)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  kernel = [v for v in tf.compat.v1.trainable_variables()
            if "kernel" in v.name][0]
  tf.compat.v1.summary.scalar("k00", kernel[0, 0])
  tf.compat.v1.summary.histogram("kernel", kernel)
  train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  hooks = [tf.compat.v1.train.LoggingTensorHook(
      {"loss": loss, "k": kernel[0, 0]}, every_n_iter=7),
           _Seen(params["calls"])]
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op,
                           training_hooks=hooks)


def _events(model_dir):
  """Every event of the model_dir's events files, wall times left out."""
  import glob  # pylint: disable=g-import-not-at-top
  out = []
  for path in sorted(glob.glob(str(model_dir / "events.out.tfevents.*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      event.wall_time = 0
      for value in event.summary.value:
        if value.tag == "global_step/sec":
          value.simple_value = 0
      out.append(event.SerializeToString(deterministic=True))
  return out


def _train_calls(model_dir, monkeypatch, kept, steps, input_fn, **config):
  """Variables, events and hook calls after train() calls of `steps`."""
  calls = []
  with monkeypatch.context() as patch:
    if not kept:
      patch.setattr(step_reuse, "take", lambda key: None)
      patch.setattr(step_reuse, "keep", lambda key, steps: None)
    est = tfe.Estimator(
        _summarized_fn, model_dir=str(model_dir),
        config=tfe.RunConfig(tf_random_seed=5, save_summary_steps=10,
                             **config),
        params={"calls": calls})
    # (The Estimator deep-copies params: the hook records into its copy.)
    calls = est.params["calls"]
    for n in steps:
      est.train(input_fn, steps=n)
  reader = tf.train.load_checkpoint(str(model_dir))
  variables = {name: reader.get_tensor(name).tobytes()
               for name in reader.get_variable_to_shape_map()}
  return variables, _events(model_dir), calls, models.checkpoint_files(
      model_dir)


@pytest.mark.parametrize("steps_per_loop", [None, 4])
def test_training_calls_take_the_first_calls_steps(
    tmp_path, monkeypatch, train_reused, prunes, steps_per_loop):
  def input_fn():
    x, y = models.data()
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)

  steps = [45, 38, 12]
  want = _train_calls(tmp_path / "fresh", monkeypatch, False, steps,
                      input_fn, steps_per_loop=steps_per_loop)
  assert train_reused == [False] * 3
  del train_reused[:]
  got = _train_calls(tmp_path / "kept", monkeypatch, True, steps, input_fn,
                     steps_per_loop=steps_per_loop)
  assert train_reused == [False, True, True]
  assert got[0] == want[0]  # Every variable, bitwise.
  assert got[1] == want[1]  # Every event (summaries, log steps).
  assert got[2] == want[2]  # Every hook call, with what it fetched.
  assert got[3] == want[3]
  # The last call's hooks fired at the steps the second's did (38 steps
  # each): it pruned nothing.
  pruned = len(prunes)
  _train_calls(tmp_path / "kept", monkeypatch, True, [38], input_fn,
               steps_per_loop=steps_per_loop)
  assert len(prunes) == pruned


def test_a_call_whose_input_ends_takes_kept_steps(tmp_path, monkeypatch,
                                                   train_reused):
  def input_fn():  # 12 batches: the second call's loop runs out.
    x, y = models.data()
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)

  want = _train_calls(tmp_path / "fresh", monkeypatch, False, [5, 100],
                      input_fn)
  got = _train_calls(tmp_path / "kept", monkeypatch, True, [5, 100],
                     input_fn)
  assert train_reused[2:] == [False, True]
  assert got == want
  assert tf.train.load_checkpoint(str(tmp_path / "kept")).get_tensor(
      "global_step") == 17
