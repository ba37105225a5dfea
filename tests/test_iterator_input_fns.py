"""input_fns that return tensors from an iterator, as TF1-era samples do.

The Estimator evaluated those tensors at every Session.run: each step got the
next batch, the end of the input ended training, evaluation and prediction.
Expected numbers were measured with the real Estimator (TF 2.15.1 +
tensorflow-estimator 2.15.0) running these same programs: 10 rows, batch 4,
so 3 steps of rows 0-3, 4-7 and 8-9; w = 2.30969 after them; evaluation mean
of x 4.5 and loss 3.4367; prediction yields each row once.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.engines.function import graph_input
from estimator_compat.errors import NeedsGraphEngine

X = np.arange(10, dtype=np.float32).reshape(10, 1)
Y = X * 2
ROWS_BY_STEP = [[0., 1., 2., 3.], [4., 5., 6., 7.], [8., 9.]]


def _dataset():
  return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4)


def one_shot_input_fn():
  return tf.compat.v1.data.make_one_shot_iterator(_dataset()).get_next()


def v1_method_input_fn():
  dataset = tf.compat.v1.data.Dataset.from_tensor_slices(({"x": X}, Y))
  return dataset.batch(4).make_one_shot_iterator().get_next()


def initializable_input_fn():
  iterator = tf.compat.v1.data.make_initializable_iterator(_dataset())
  tf.compat.v1.add_to_collection("iterator_init", iterator.initializer)
  return iterator.get_next()


def table_initialized_input_fn():
  """A known recipe: the default Scaffold runs TABLE_INITIALIZERS."""
  iterator = tf.compat.v1.data.make_initializable_iterator(_dataset())
  tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.TABLE_INITIALIZERS,
                                 iterator.initializer)
  return iterator.get_next()


class _InitializeIterator(tfe.SessionRunHook):
  """Runs the initializer input_fn put in a collection (a user hook)."""

  def after_create_session(self, session, coord):
    del coord
    for op in tf.compat.v1.get_collection("iterator_init"):
      session.run(op)


class _Seen(tfe.SessionRunHook):
  """Records, per step, the features the model_fn was given."""

  def __init__(self):
    self.rows = []

  def begin(self):
    self._seen = tf.compat.v1.get_default_graph().get_tensor_by_name(
        "seen:0")

  def before_run(self, run_context):
    return tfe.SessionRunArgs(self._seen)

  def after_run(self, run_context, run_values):
    self.rows.append(np.ravel(run_values.results).tolist())


def model_fn(features, labels, mode):
  x = tf.identity(features["x"], name="seen")
  w = tf.compat.v1.get_variable(
      "w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
  prediction = tf.matmul(x, w)
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions={"x": x[:, 0]})
  loss = tf.reduce_mean(tf.square(prediction - labels))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
      loss, global_step=tf.compat.v1.train.get_or_create_global_step())
  return tfe.EstimatorSpec(
      mode, loss=loss, train_op=train_op,
      eval_metric_ops={"mean_x": tf.compat.v1.metrics.mean(x)})


def _check_like_the_estimator(estimator, input_fn, hooks=()):
  seen = _Seen()
  estimator.train(input_fn, hooks=list(hooks) + [seen], steps=20)
  assert seen.rows == ROWS_BY_STEP
  assert estimator.get_variable_value("global_step") == 3
  np.testing.assert_allclose(estimator.get_variable_value("w"), [[2.30969]],
                             rtol=1e-5)
  seen = _Seen()
  metrics = estimator.evaluate(input_fn, hooks=list(hooks) + [seen])
  assert seen.rows == ROWS_BY_STEP
  assert metrics["mean_x"] == pytest.approx(4.5)
  assert metrics["loss"] == pytest.approx(3.4367, rel=1e-4)
  assert metrics["global_step"] == 3
  predicted = [p["x"] for p in estimator.predict(input_fn, hooks=list(hooks))]
  assert predicted == list(range(10))


@pytest.mark.parametrize("input_fn", [one_shot_input_fn, v1_method_input_fn,
                                      table_initialized_input_fn])
def test_one_shot_iterator_feeds_every_row_once_in_order(engine, tmp_path,
                                                         input_fn):
  del engine
  _check_like_the_estimator(tfe.Estimator(model_fn, str(tmp_path)), input_fn)


def test_initializable_iterator_with_a_hook_is_honoured_or_routed(
    engine, tmp_path):
  estimator = tfe.Estimator(model_fn, str(tmp_path))
  if engine == "graph":
    _check_like_the_estimator(estimator, initializable_input_fn,
                              hooks=[_InitializeIterator()])
    return
  # The function engine has no Session for the user's hook to initialize
  # the iterator in: the call goes to the graph engine, or (engine chosen
  # explicitly) fails before any step with the reason.
  try:
    _check_like_the_estimator(estimator, initializable_input_fn,
                              hooks=[_InitializeIterator()])
  except NeedsGraphEngine as e:
    assert "initializable iterator" in str(e)
    assert "engine='graph'" in str(e)
    assert not os.listdir(tmp_path) or not tf.train.latest_checkpoint(
        str(tmp_path))


def test_random_tensors_are_drawn_anew_at_every_step(engine, tmp_path):
  def input_fn():
    return {"x": tf.random.uniform([4, 1])}, tf.zeros([4, 1])

  seen = _Seen()
  estimator = tfe.Estimator(model_fn, str(tmp_path),
                            config=tfe.RunConfig(tf_random_seed=7))
  estimator.train(input_fn, hooks=[seen], steps=2)
  # The real Estimator's values for this seed (TF 2.15.1).
  np.testing.assert_allclose(
      seen.rows, [[0.7537285, 0.0779376, 0.4588091, 0.8568270],
                  [0.1781592, 0.8656577, 0.9700692, 0.4905751]], rtol=1e-6)
  del engine


def test_constant_tensors_repeat_at_every_step(engine, tmp_path):
  def input_fn():
    return {"x": tf.constant(X[:2])}, tf.constant(Y[:2])

  seen = _Seen()
  tfe.Estimator(model_fn, str(tmp_path)).train(input_fn, hooks=[seen],
                                               steps=3)
  assert seen.rows == [[0., 1.]] * 3
  del engine


def _classify(input_fn, mode=tfe.ModeKeys.TRAIN):
  built = graph_input.build(None, mode, input_fn, "input_fn", "tensors")
  return graph_input.classify(built, "input_fn")


def test_classify_what_the_tensors_need():
  assert _classify(lambda: {"x": tf.constant(X) * 2.}) == graph_input.CONSTANT
  assert _classify(one_shot_input_fn) == graph_input.STREAM
  assert _classify(table_initialized_input_fn) == graph_input.STREAM
  with pytest.raises(NeedsGraphEngine, match="initializable iterator"):
    _classify(initializable_input_fn)
  with pytest.raises(NeedsGraphEngine, match="placeholder"):
    _classify(lambda: tf.compat.v1.placeholder_with_default(X, [None, 1]))
  with pytest.raises(NeedsGraphEngine, match="variable 'global_step'"):
    _classify(lambda: tf.cast(tf.compat.v1.train.get_global_step(),
                              tf.float32))


def _shuffled_rows(model_dir, op_seed):
  def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).shuffle(
        10, seed=op_seed).batch(5)

  seen = _Seen()
  estimator = tfe.Estimator(model_fn, str(model_dir),
                            config=tfe.RunConfig(tf_random_seed=42))
  estimator.train(input_fn, hooks=[seen])
  return seen.rows


def test_dataset_shuffle_with_op_seed_draws_from_tf_random_seed(engine,
                                                                tmp_path):
  # The real Estimator's order (TF 2.15): seeds (tf_random_seed, 3).
  assert _shuffled_rows(tmp_path, 3) == [[6., 5., 7., 3., 8.],
                                         [0., 9., 4., 1., 2.]]
  del engine


def test_dataset_shuffle_without_op_seed_as_the_estimator(engine, tmp_path):
  # The op seed is the op count of the Estimator's graph: the function
  # engine builds the Dataset in such a graph too (TF 2.15's order).
  assert _shuffled_rows(tmp_path, None) == [[2., 0., 9., 3., 8.],
                                            [1., 7., 4., 5., 6.]]
  del engine


def test_changing_tensors_under_a_strategy_fail_as_in_the_estimator(
    tmp_path, monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  config = tfe.RunConfig(
      train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]))
  estimator = tfe.Estimator(model_fn, str(tmp_path), config=config)
  # The Estimator's words (TF 2.15 raised them for any tensors), then why.
  with pytest.raises(ValueError, match="must return a tf.data.Dataset.*"
                     "cannot be split across replicas"):
    estimator.train(one_shot_input_fn, steps=2)
  assert tf.train.latest_checkpoint(str(tmp_path)) is None


_EXITS_AFTER_CLEAR_SESSION = '''
import sys
import numpy as np
import tensorflow as tf
import estimator_compat as tfe


def model_fn(features, labels, mode):
  w = tf.compat.v1.get_variable("w", [1, 1])
  loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  x = np.ones([8, 1], np.float32)
  dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, x)).batch(4)
  return tf.compat.v1.data.make_one_shot_iterator(dataset.repeat()).get_next()


tfe.Estimator(model_fn, sys.argv[1]).train(input_fn, steps=2)
tf.keras.backend.clear_session()
print("trained", flush=True)
'''


@pytest.mark.slow
@pytest.mark.parametrize("engine_name", [None, "graph"])
def test_program_exits_after_an_unfinished_iterator_input(engine_name,
                                                          tmp_path):
  """The input's private Session closes at exit without hanging.

  An endless one-shot iterator input leaves its stream unfinished; with
  clear_session() the stream was finalized only at interpreter exit, where
  `with Session()`'s closing thread never started (generator finding G2).
  """
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  if engine_name:
    env["ESTIMATOR_COMPAT_ENGINE"] = engine_name
  program = tmp_path / "program.py"
  program.write_text(_EXITS_AFTER_CLEAR_SESSION)
  try:
    done = subprocess.run(
        [sys.executable, str(program), str(tmp_path / "model")], env=env,
        capture_output=True, text=True, timeout=180)
  except subprocess.TimeoutExpired:
    pytest.fail("the program trained but did not exit within 180 s")
  assert done.returncode == 0, done.stderr[-2000:]
  assert "trained" in done.stdout


@pytest.mark.parametrize("engine_name", [None, "graph", "function"])
def test_a_variable_made_from_the_input_fails_as_in_the_estimator(
    engine_name, tmp_path, monkeypatch):
  # Finding G7: the Estimator ran the variable initializers before the
  # Dataset's iterator was initialized, so a variable whose initial value
  # waits on the input failed (FailedPreconditionError, "GetNext() failed
  # because the iterator has not been initialized"), before any checkpoint.
  # The default engine (rerouted by the function engine's NeedsGraphEngine)
  # and the graph engine give that error, with the fix added.
  if engine_name:
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", engine_name)
  else:
    monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)

  def model_fn(features, labels, mode):
    check = tf.compat.v1.debugging.assert_equal(
        tf.shape(features["x"])[0], tf.shape(labels)[0])
    with tf.control_dependencies([check]):
      w = tf.Variable(tf.zeros([1]), name="w")
    loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  if engine_name == "function":
    with pytest.raises(NeedsGraphEngine, match="initialized from a tensor"):
      est.train(lambda: _dataset().repeat(), steps=2)
  else:
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="iterator has not been initialized") as raised:
      est.train(lambda: _dataset().repeat(), steps=2)
    assert "Fix: a variable's initial value reads the input" in str(
        raised.value)
  assert not [f for f in os.listdir(tmp_path) if f.startswith("model.ckpt")]
