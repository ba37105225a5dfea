"""Early stopping: the stop_if_* decisions, and stopping on both engines.

The decisions replay the cases of the Estimator's own early_stopping_test
(its summaries are written there with a private helper, so the conformance
count leaves those tests out); here they are written with a public
FileWriter.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.in_training import early_stopping
from estimator_compat.in_training.early_stopping_hooks import (
    CheckForStoppingHook, StopOnPredicateHook, SummedVoteStoppingHook,
    get_or_create_stop_var)
from tests import models

_HISTORY = ((1000, 0.8, 0.5), (2000, 0.7, 0.6), (3000, 0.4, 0.7),
            (3500, 0.41, 0.68))


def _write_history(eval_dir, rows):
  with tf.Graph().as_default():
    writer = tf.compat.v1.summary.FileWriter(eval_dir)
  for step, loss, accuracy in rows:
    summary = tf.compat.v1.Summary()
    summary.value.add(tag="loss", simple_value=loss)
    summary.value.add(tag="accuracy", simple_value=accuracy)
    writer.add_summary(summary, step)
  writer.close()


@pytest.fixture
def chief_estimator(tmp_path):
  estimator = models.estimator(tmp_path / "model")
  _write_history(estimator.eval_dir(), _HISTORY)
  return estimator


def _stops(hooks):
  """Whether one run of a MonitoredSession with `hooks` asks to stop."""
  with tf.Graph().as_default():
    tf.compat.v1.train.create_global_step()
    no_op = tf.no_op()
    with tf.compat.v1.train.SingularMonitoredSession(hooks=hooks) as session:
      session.run(no_op)
      return session.should_stop()


def test_read_eval_metrics(tmp_path):
  _write_history(str(tmp_path / "eval"), _HISTORY[:2])
  assert early_stopping.read_eval_metrics(str(tmp_path / "eval")) == {
      1000: {"loss": pytest.approx(0.8), "accuracy": pytest.approx(0.5)},
      2000: {"loss": pytest.approx(0.7), "accuracy": pytest.approx(0.6)}}
  assert list(early_stopping.read_eval_metrics(str(tmp_path / "eval"))) == [
      1000, 2000]
  assert early_stopping.read_eval_metrics(str(tmp_path / "missing")) == {}


@pytest.mark.parametrize("threshold,min_steps,stop", [
    (0.8, 0, False), (0.6, 4000, False), (0.6, 0, True)])
def test_stop_if_higher(chief_estimator, threshold, min_steps, stop):
  assert _stops([tfe.experimental.stop_if_higher_hook(
      chief_estimator, "accuracy", threshold, min_steps=min_steps)]) == stop


@pytest.mark.parametrize("threshold,min_steps,stop", [
    (0.3, 0, False), (0.5, 4000, False), (0.5, 0, True)])
def test_stop_if_lower(chief_estimator, threshold, min_steps, stop):
  assert _stops([tfe.experimental.stop_if_lower_hook(
      chief_estimator, "loss", threshold, min_steps=min_steps)]) == stop


@pytest.mark.parametrize("max_steps,min_steps,stop", [
    (1500, 0, False), (500, 4000, False), (500, 0, True)])
def test_stop_if_no_increase(chief_estimator, max_steps, min_steps, stop):
  assert _stops([tfe.experimental.stop_if_no_increase_hook(
      chief_estimator, "accuracy", max_steps, min_steps=min_steps)]) == stop


@pytest.mark.parametrize("max_steps,min_steps,stop", [
    (1500, 0, False), (500, 4000, False), (500, 0, True)])
def test_stop_if_no_decrease(chief_estimator, max_steps, min_steps, stop):
  assert _stops([tfe.experimental.stop_if_no_decrease_hook(
      chief_estimator, "loss", max_steps, min_steps=min_steps)]) == stop


def test_make_early_stopping_hook_checks_its_arguments(chief_estimator):
  with pytest.raises(TypeError, match="tf.estimator.Estimator"):
    tfe.experimental.make_early_stopping_hook(object(), lambda: True)
  with pytest.raises(ValueError, match="Only one of"):
    tfe.experimental.make_early_stopping_hook(
        chief_estimator, lambda: True, run_every_secs=60, run_every_steps=1)
  with pytest.raises(TypeError, match="callable"):
    tfe.experimental.make_early_stopping_hook(chief_estimator, True)


def test_hook_kind_follows_the_task(tmp_path, monkeypatch):
  chief = models.estimator(tmp_path / "a")
  assert isinstance(tfe.experimental.make_early_stopping_hook(
      chief, lambda: False), StopOnPredicateHook)
  monkeypatch.setenv("TF_CONFIG", (
      '{"cluster": {"chief": ["h:1"], "worker": ["h:2"], "ps": ["h:3"]}, '
      '"task": {"type": "worker", "index": 0}}'))
  worker = models.estimator(tmp_path / "b")
  assert isinstance(tfe.experimental.make_early_stopping_hook(
      worker, lambda: False), CheckForStoppingHook)


def test_worker_hook_stops_once_the_chief_set_stop():
  hook = CheckForStoppingHook()
  with tf.Graph().as_default():
    tf.compat.v1.train.create_global_step()
    no_op = tf.no_op()
    set_stop = tf.compat.v1.assign(get_or_create_stop_var(), True)
    with tf.compat.v1.train.SingularMonitoredSession(hooks=[hook]) as session:
      session.run(no_op)
      assert not session.should_stop()
      session.raw_session().run(set_stop)
      session.run(no_op)
      assert session.should_stop()


def _loss_history(estimator):
  return early_stopping.read_eval_metrics(estimator.eval_dir())


def _expected_stop(history, patience):
  best = best_step = None
  for step, metrics in history.items():
    if best is None or metrics["loss"] < best:
      best, best_step = metrics["loss"], step
    if step - best_step >= patience:
      return step
  return None


def _overfitting_model_fn(features, labels, mode, params):
  del params
  logits = tf.compat.v1.layers.dense(
      tf.compat.v1.layers.dense(features["x"], 16, activation=tf.nn.relu), 3)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_train_and_evaluate_stops_where_the_history_says(tmp_path, engine):
  x, y = models.data(rows=64)
  noisy = np.where(np.arange(16) % 3 == 0, (y[:16] + 1) % 3, y[:16])
  estimator = models.estimator(tmp_path / "model",
                               model_fn=_overfitting_model_fn,
                               save_checkpoints_steps=5)
  hook = tfe.experimental.stop_if_no_decrease_hook(
      estimator, "loss", 10, run_every_secs=None, run_every_steps=1)
  train_input = tfe.inputs.numpy_input_fn({"x": x[:16]}, noisy,
                                          batch_size=8, num_epochs=None,
                                          shuffle=False)
  eval_input = tfe.inputs.numpy_input_fn({"x": x[16:]}, y[16:],
                                         batch_size=48, num_epochs=1,
                                         shuffle=False)
  tfe.train_and_evaluate(
      estimator, tfe.TrainSpec(train_input, max_steps=300, hooks=[hook]),
      tfe.EvalSpec(eval_input, steps=None, throttle_secs=0))
  stopped = int(estimator.get_variable_value("global_step"))
  expected = _expected_stop(_loss_history(estimator), 10)
  assert expected is not None and expected < 300
  # The decision is taken on the step whose checkpoint was just evaluated.
  assert stopped == expected
  # As in TF 2.15: the step's checkpoint was saved before the hook decided,
  # so the saved STOP is still off.
  assert "signal_early_stopping/STOP" in estimator.get_variable_names()


def test_stop_variable_reaches_a_later_worker_run(tmp_path, engine):
  """The chief's STOP, once saved, stops a worker's hook at its first step."""
  estimator = models.estimator(tmp_path / "model")
  calls = []

  def stop_at_third_check():
    calls.append(1)
    return len(calls) >= 3

  chief_hook = tfe.experimental.make_early_stopping_hook(
      estimator, stop_at_third_check, run_every_secs=None, run_every_steps=1)
  estimator.train(models.input_fn(), hooks=[chief_hook], steps=50)
  assert estimator.get_variable_value("global_step") == 3
  assert estimator.get_variable_value("signal_early_stopping/STOP")
  estimator.train(models.input_fn(), hooks=[CheckForStoppingHook()],
                  steps=50)
  assert estimator.get_variable_value("global_step") == 4


def test_strategy_hook_stops_a_step_after_the_vote(tmp_path, monkeypatch):
  """Under train_distribute, as TF 2.15: vote at step 2, stop at step 3."""
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  estimator = models.estimator(tmp_path / "model", train_distribute=strategy)
  with pytest.raises(ValueError, match="run_every_secs should not be set"):
    tfe.experimental.make_early_stopping_hook(estimator, lambda: True)
  steps = []

  def stop_at_two():
    steps.append(1)
    return len(steps) >= 2

  hook = tfe.experimental.make_early_stopping_hook(
      estimator, stop_at_two, run_every_secs=None, run_every_steps=1)
  assert isinstance(hook, SummedVoteStoppingHook)

  def input_fn():
    x, y = models.data()
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8)

  estimator.train(input_fn, hooks=[hook], steps=50)
  assert estimator.get_variable_value("global_step") == 3
  assert estimator.get_variable_value("signal_early_stopping/STOP") == 1


def test_decision_logs_the_step_the_run_started_at(tmp_path, monkeypatch,
                                                   caplog):
  """The hook reads the step before the run's update, as the Estimator's
  hooks mostly saw it (on the graph engine that read races with the update,
  as in a TF1 session, so only the function engine is exact)."""
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  caplog.set_level("INFO")
  estimator = models.estimator(tmp_path / "model")
  seen = []

  def stop_on_second_check():
    seen.append(1)
    return len(seen) == 2

  hook = tfe.experimental.make_early_stopping_hook(
      estimator, stop_on_second_check, run_every_secs=None, run_every_steps=3)
  estimator.train(models.input_fn(), hooks=[hook], steps=50)
  assert estimator.get_variable_value("global_step") == 4
  assert "Requesting early stopping at global step 3" in caplog.text
