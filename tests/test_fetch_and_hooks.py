"""Fetches of steps and hooks, hooks' graph, Keras metrics, no checkpoints.

Expected values were checked against the real Estimator (TF 2.15.1).
"""

import collections
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.engines.function import ps_training
from estimator_compat.errors import (GRAPH_ENGINE_FIX,
                                     UnsupportedOnFunctionEngine)
from tests import models

ROWS = np.arange(8, dtype=np.float32).reshape(8, 1)  # Mean 3.5, sum 28.


def input_fn(repeat=True):
  def fn():
    dataset = tf.data.Dataset.from_tensor_slices(({"x": ROWS}, ROWS))
    return (dataset.repeat() if repeat else dataset).batch(2)
  return fn


def counting_model_fn(features, labels, mode, params):
  """w counts the steps; the train_op form comes from params['train_op']."""
  del labels
  w = tf.compat.v1.get_variable("w", [1], initializer=tf.zeros_initializer())
  tf.identity(w * 2.0, name="double_w")
  tf.compat.v1.add_to_collection("inputs", features["x"])
  global_step = tf.compat.v1.train.get_global_step()
  loss = tf.reduce_sum(features["x"] * w)
  total = tf.compat.v1.get_variable(
      "total", [], initializer=tf.zeros_initializer(),
      collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES])
  metrics = {"total": (total, tf.compat.v1.assign_add(
      total, tf.reduce_sum(features["x"])))}
  predictions = {"x": features["x"],
                 "w_after": tf.compat.v1.assign_add(w, [0.0])}
  form = params.get("train_op", "group")
  if form == "assign_add":
    train_op = tf.compat.v1.assign_add(global_step, 1)
  elif form == "group":
    train_op = tf.group(tf.compat.v1.assign_add(global_step, 1),
                        tf.compat.v1.assign_add(w, [1.0]))
  else:  # A bare variable: what the Estimator took as its `.op`.
    train_op = w
  # A variable prediction needs explicit export_outputs: the default
  # PredictOutput takes Tensors only (as the Estimator's did).
  export_outputs = {"serving_default": tfe.export.PredictOutput(
      {"x": features["x"]})}
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op,
                           predictions=predictions, eval_metric_ops=metrics,
                           training_hooks=params.get("hooks", ()),
                           export_outputs=export_outputs)


def estimator(tmp_path, **params):
  return tfe.Estimator(counting_model_fn, model_dir=str(tmp_path),
                       params=params)


# Finding 5: train_ops (and other fetches) that are not a plain op/tensor.
@pytest.mark.parametrize("form", ["assign_add", "group", "variable"])
def test_every_train_op_form_session_run_took(tmp_path, engine, form):
  est = estimator(tmp_path, train_op=form)
  est.train(input_fn(), steps=3)
  assert est.get_variable_value("global_step") == 3
  assert est.get_variable_value("w") == (3.0 if form == "group" else 0.0)
  # An unread variable as a metric update, a variable as its value.
  results = est.evaluate(input_fn(repeat=False))
  assert results["total"] == 28.0
  assert results["global_step"] == 3
  # An unread variable as a prediction.
  batches = list(est.predict(input_fn(repeat=False),
                             yield_single_examples=False))
  assert [row for b in batches for row in b["x"][:, 0]] == list(ROWS[:, 0])
  expected_w = 3.0 if form == "group" else 0.0
  assert [b["w_after"][0] for b in batches] == [expected_w] * 4, engine


# Finding 6: hooks run in the model's graph and fetch what Session.run took.
class _GraphRecorder(tf.compat.v1.train.SessionRunHook):
  """Records what the default graph held at each hook call."""

  def __init__(self):
    self.calls = []
    self.steps = []

  def _record(self, name, session):
    graph = tf.compat.v1.get_default_graph()
    step = tf.compat.v1.train.get_global_step()
    self.calls.append((name, session is None or graph is session.graph,
                       step is not None))

  def begin(self):
    self._record("begin", None)

  def after_create_session(self, session, coord):
    self._record("after_create_session", session)

  def before_run(self, run_context):
    self._record("before_run", run_context.session)
    return tf.compat.v1.train.SessionRunArgs(
        tf.compat.v1.train.get_global_step())

  def after_run(self, run_context, run_values):
    self._record("after_run", run_context.session)
    self.steps.append(int(run_values.results))

  def end(self, session):
    self._record("end", session)


def test_hooks_run_with_the_model_graph_as_default(tmp_path, engine):
  hook = _GraphRecorder()
  estimator(tmp_path).train(input_fn(), steps=2, hooks=[hook])
  names = [name for name, _, _ in hook.calls]
  assert names == ["begin", "after_create_session", "before_run", "after_run",
                   "before_run", "after_run", "end"]
  assert all(same_graph and has_step for _, same_graph, has_step
             in hook.calls), (engine, hook.calls)
  assert len(hook.steps) == 2 and all(0 <= s <= 2 for s in hook.steps)


def test_logging_tensor_hook_takes_variables_and_names(tmp_path, engine):
  logged = []

  def model_fn(features, labels, mode, params):
    # The global step variable itself, and a tensor by name.
    hook = tf.compat.v1.train.LoggingTensorHook(
        {"step": tf.compat.v1.train.get_global_step(), "w": "double_w:0"},
        every_n_iter=1, formatter=lambda values: logged.append(values) or "")
    return counting_model_fn(features, labels, mode,
                             dict(params, hooks=[hook]))

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path), params={})
  est.train(input_fn(), steps=3)
  assert len(logged) == 3, engine
  steps = [int(values["step"]) for values in logged]
  assert steps == sorted(steps) and all(0 <= s <= 3 for s in steps)
  assert all(values["w"].shape == (1,) for values in logged)


def test_a_fetched_variable_is_read_before_the_step(tmp_path, engine):
  # The real Estimator (TF 2.15) gave [0, 1, 2, 3, 4, 5]: a TF1 session read
  # the variable before the train_op's increment. The function engine reads
  # it before the step; TF1 itself (the graph engine) may, under load, read
  # it after.
  hook = models.GlobalStepRecorder()
  est = tfe.Estimator(counting_model_fn, model_dir=str(tmp_path), params={})
  est.train(input_fn(), steps=6, hooks=[hook])
  if engine == "function":
    assert hook.steps == [0, 1, 2, 3, 4, 5]
  else:
    assert all(s in (i, i + 1) for i, s in enumerate(hook.steps)), hook.steps


Pair = collections.namedtuple("Pair", ["step", "w"])


class _SessionRunHook(tf.compat.v1.train.SessionRunHook):
  """Calls session.run with nested fetch structures in after_run."""

  def __init__(self, fetch_input=False):
    self.fetch_input = fetch_input
    self.values = []

  def after_run(self, run_context, run_values):
    graph = tf.compat.v1.get_default_graph()
    step = tf.compat.v1.train.get_global_step()
    w = graph.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)[0]
    fetches = {"pair": Pair(step, [w, "double_w:0"]),
               "ops": ("double_w", graph.get_operation_by_name("double_w"))}
    if self.fetch_input:
      fetches = graph.get_collection("inputs")
    self.values.append(run_context.session.run(fetches))


def test_hook_session_run_takes_any_fetch_structure(tmp_path, engine):
  hook = _SessionRunHook()
  estimator(tmp_path).train(input_fn(), steps=2, hooks=[hook])
  last = hook.values[-1]
  assert isinstance(last["pair"], Pair)
  assert last["pair"].step == 2
  np.testing.assert_array_equal(last["pair"].w[0], [2.0])
  np.testing.assert_array_equal(last["pair"].w[1], [4.0])
  assert last["ops"] == (None, None), engine
  # The same in evaluate() and predict().
  est = estimator(tmp_path)
  for run in (lambda h: est.evaluate(input_fn(), steps=1, hooks=[h]),
              lambda h: next(est.predict(input_fn(), hooks=[h],
                                         yield_single_examples=False))):
    hook = _SessionRunHook()
    run(hook)
    assert hook.values[-1]["pair"].step == 2
    np.testing.assert_array_equal(hook.values[-1]["pair"].w[1], [4.0])


def test_hook_session_run_of_input_tensors_fails_clearly(tmp_path):
  est = tfe.Estimator(counting_model_fn, model_dir=str(tmp_path), params={},
                      config=tfe.RunConfig(engine="function"))
  with pytest.raises(UnsupportedOnFunctionEngine,
                     match="needs the input batch") as raised:
    est.train(input_fn(), steps=2, hooks=[_SessionRunHook(fetch_input=True)])
  assert GRAPH_ENGINE_FIX in str(raised.value)


# Finding 3: a tf.keras Metric object in eval_metric_ops.
def keras_metric_model_fn(features, labels, mode):
  del labels
  w = tf.compat.v1.get_variable("w", [1], initializer=tf.zeros_initializer())
  loss = tf.reduce_sum(features["x"] * w)
  mean = tf.keras.metrics.Mean()
  mean.update_state(features["x"])
  train_op = tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1)
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op,
                           eval_metric_ops={"mean": mean})


def test_keras_metric_object_in_eval_metric_ops(tmp_path, engine):
  est = tfe.Estimator(keras_metric_model_fn, model_dir=str(tmp_path))
  est.train(input_fn(), steps=2)
  # Metric variables are local: not in the checkpoint (as the Estimator).
  names = [name for name, _ in tf.train.list_variables(str(tmp_path))]
  assert sorted(names) == ["global_step", "w"], engine
  assert est.evaluate(input_fn(repeat=False))["mean"] == pytest.approx(3.5)
  # Reset per evaluation: rows 0-3 only.
  assert est.evaluate(input_fn(repeat=False), steps=2)["mean"] == (
      pytest.approx(1.5))


def test_keras_metric_without_update_state_is_refused(tmp_path, engine):
  def model_fn(features, labels, mode):
    spec = keras_metric_model_fn(features, labels, mode)
    return spec._replace(eval_metric_ops={"mean": tf.keras.metrics.Mean()})

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  with pytest.raises(ValueError, match=r"call update_state\(...\)"):
    est.evaluate(input_fn(repeat=False))
  del engine


# Finding 7: no checkpoints at all.
def test_training_without_checkpoints_writes_none(tmp_path, engine):
  est = tfe.Estimator(
      counting_model_fn, model_dir=str(tmp_path), params={},
      config=tfe.RunConfig(save_checkpoints_steps=None,
                           save_checkpoints_secs=None))
  est.train(input_fn(), steps=3)
  files = os.listdir(tmp_path)
  # What the Estimator wrote: the events file only.
  assert files and all(f.startswith("events.out.tfevents.") for f in files), (
      engine, files)
  assert models.checkpoint_files(tmp_path) == []


def test_parameter_server_hooks_run_in_their_graph():
  """The PS loop's hooks (a plain graph as default) still read the step."""
  global_step = tf.Variable(0, dtype=tf.int64, name="global_step")
  hook = _GraphRecorder()
  hooks = ps_training._Hooks(  # pylint: disable=protected-access
      [tf.compat.v1.train.StopAtStepHook(num_steps=2), hook], global_step)
  while not hooks.runner.stop_requested:
    keys = hooks.before()
    global_step.assign_add(1)
    hooks.after(keys, int(global_step.numpy()))
  assert hook.steps == [1, 2]
  assert all(same and has_step for _, same, has_step in hook.calls)


def test_nested_eval_metric_values(tmp_path, engine):
  """Session.run returned a metric value's structure; so does evaluate()."""
  def model_fn(features, labels, mode):
    spec = counting_model_fn(features, labels, mode, {})
    value = ((tf.constant(2.0), tf.constant(1)), tf.constant(3.0, tf.float64))
    return spec._replace(eval_metric_ops={"nested": (value, tf.no_op())})

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(input_fn(), steps=1)
  (two, one), three = est.evaluate(input_fn(), steps=1)["nested"]
  assert (two, one, three) == (2.0, 1, 3.0), engine


class _CountingHook(tf.compat.v1.train.SessionRunHook):
  """Fetches an assign_add it made in begin() (an unread variable)."""

  def __init__(self):
    self.counts = []

  def begin(self):
    counter = tf.compat.v1.get_variable(
        "hook_counter", [], tf.int64, initializer=tf.zeros_initializer(),
        trainable=False)
    self._increment = tf.compat.v1.assign_add(counter, 1)

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs({"count": self._increment})

  def after_run(self, run_context, run_values):
    self.counts.append(int(run_values.results["count"]))


def test_hook_fetches_an_unread_variable_it_made(tmp_path, engine):
  hook = _CountingHook()
  estimator(tmp_path).train(input_fn(), steps=3, hooks=[hook])
  assert hook.counts == [1, 2, 3], engine


@pytest.mark.parametrize("name,quoted", [("loss", '"loss"'),
                                         ("global_step", "`global_step`")])
def test_metric_names_the_estimator_reserves(tmp_path, engine, name, quoted):
  def model_fn(features, labels, mode):
    spec = keras_metric_model_fn(features, labels, mode)
    return spec._replace(eval_metric_ops={name: spec.eval_metric_ops["mean"]})

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(input_fn(), steps=1)
  with pytest.raises(ValueError, match=f"Metric with name {quoted} is not "
                     "allowed, because Estimator already defines"):
    est.evaluate(input_fn(repeat=False))
  del engine


def test_estimator_spec_takes_a_keras_metric_as_the_estimator_did():
  with tf.Graph().as_default():
    mean = tf.keras.metrics.Mean()
    mean.update_state(tf.constant(1.0))
    spec = tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant(1.0),
                             eval_metric_ops={"mean": mean})
    value, update = spec.eval_metric_ops["mean"]
    assert isinstance(update, tf.Operation) and tf.is_tensor(value)
    for key in (tf.compat.v1.GraphKeys.LOCAL_VARIABLES,
                tf.compat.v1.GraphKeys.METRIC_VARIABLES):
      collection = tf.compat.v1.get_collection(key)
      assert all(any(v is c for c in collection) for v in mean.variables)
  with tf.Graph().as_default():
    with pytest.raises(ValueError, match=r"call update_state\(...\)"):
      tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant(1.0),
                        eval_metric_ops={"mean": tf.keras.metrics.Mean()})


def test_one_logging_hook_by_names_serves_two_train_calls(tmp_path, engine):
  logged = []
  hook = tf.compat.v1.train.LoggingTensorHook(
      {"step": "global_step:0", "double": "double_w:0"}, every_n_iter=1,
      formatter=lambda values: logged.append(values) or "")
  est = estimator(tmp_path)
  est.train(input_fn(), steps=2, hooks=[hook])
  est.train(input_fn(), steps=2, hooks=[hook])
  assert len(logged) == 4, engine
  assert logged[-1]["double"].shape == (1,)
