"""Function-engine limitations found while a call is set up reroute it.

Each program here ran on the Estimator; the function engine cannot run it
as it is. On the default engine the call runs on the graph engine (one log
line) with the Estimator's result; a chosen engine='function' raises
NeedsGraphEngine, whose message names the fix.
"""

import logging
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.errors import NeedsGraphEngine
from tests import scaffold_models as sm


def _model_fn(initial_value=None):

  def model_fn(features, labels, mode):
    if initial_value is None:
      w = tf.compat.v1.get_variable(
          "w", [2, 1], initializer=tf.compat.v1.ones_initializer())
    else:  # A tensor computed inside model_fn, as TF1 graphs allowed.
      w = tf.compat.v1.get_variable("w", initializer=initial_value())
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  return model_fn


def _input_fn():
  return tf.data.Dataset.from_tensors(
      ({"x": np.ones((4, 2), np.float32)}, np.ones((4, 1), np.float32))
  ).repeat()


def _after_two_steps(w):
  """w after two SGD steps on mean((2w - 1)^2), gradient 2 (2w - 1)."""
  for _ in range(2):
    w -= 0.1 * 2.0 * (2.0 * w - 1.0)
  return w


def _train(engine_name, caplog, model_dir, model_fn, hooks=()):
  """Trains 2 steps; None, or the function engine's NeedsGraphEngine."""
  est = tfe.Estimator(model_fn, model_dir=str(model_dir))
  if engine_name == "function":
    with pytest.raises(NeedsGraphEngine, match="ESTIMATOR_COMPAT_ENGINE"):
      est.train(_input_fn, steps=2, hooks=list(hooks))
    return None
  with caplog.at_level(logging.INFO):
    est.train(_input_fn, steps=2, hooks=list(hooks))
  assert len(sm.routed_to_graph(caplog)) == (engine_name == "default")
  return est


def test_variable_initialized_from_a_model_fn_tensor(engine_name, caplog,
                                                     tmp_path):
  est = _train(engine_name, caplog, tmp_path,
               _model_fn(lambda: tf.ones([2, 1]) * 2.0))
  if est is not None:
    w = _after_two_steps(2.0)
    np.testing.assert_allclose(est.get_variable_value("w").ravel(), [w, w],
                               rtol=1e-6)


def test_checkpoint_saver_hook_replaces_the_default_saver(engine_name,
                                                          caplog, tmp_path):
  # As in the Estimator, the hook's directory gets the checkpoints and
  # model_dir none.
  hook_dir = tmp_path / "hook"
  hook = tf.compat.v1.train.CheckpointSaverHook(str(hook_dir), save_steps=1)
  est = _train(engine_name, caplog, tmp_path / "model", _model_fn(),
               hooks=[hook])
  if est is not None:
    assert tf.train.latest_checkpoint(str(hook_dir)).endswith("model.ckpt-2")
    assert not os.path.exists(tmp_path / "model" / "checkpoint")


class _FeedingHook(tf.compat.v1.train.SessionRunHook):
  """Runs a placeholder with a feed_dict once the session exists."""

  def begin(self):
    self._placeholder = tf.compat.v1.placeholder(tf.float32, [])
    self._doubled = self._placeholder * 2.0
    self.values = []

  def after_create_session(self, session, coord):
    self.values.append(session.run(self._doubled,
                                   feed_dict={self._placeholder: 3.0}))


def test_after_create_session_with_a_feed_dict(engine_name, caplog, tmp_path):
  hook = _FeedingHook()
  est = _train(engine_name, caplog, tmp_path, _model_fn(), hooks=[hook])
  if est is not None:
    assert hook.values[-1] == 6.0
    assert est.get_variable_value("global_step") == 2


def _local_initializer_model_fn(features, labels, mode):
  """Builds tf.compat.v1.local_variables_initializer(), as TF1 code did."""
  w = tf.compat.v1.get_variable(
      "w", [2, 1], initializer=tf.compat.v1.ones_initializer())
  loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
  mean, update = tf.compat.v1.metrics.mean(loss)
  tf.compat.v1.local_variables_initializer()
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=tf.group(train_op, update),
                           eval_metric_ops={"mean_loss": (mean, update)})


def test_local_variables_initializer_in_model_fn(engine_name, caplog,
                                                 tmp_path):
  # It was a TypeError inside TensorFlow on the function engine (its
  # variables, made eagerly, have no initializer op to group).
  est = _train(engine_name, caplog, tmp_path, _local_initializer_model_fn)
  if est is not None:
    w = _after_two_steps(1.0)
    np.testing.assert_allclose(est.get_variable_value("w").ravel(), [w, w],
                               rtol=1e-6)
    result = est.evaluate(_input_fn, steps=1)
    np.testing.assert_allclose(result["mean_loss"], (2.0 * w - 1.0) ** 2,
                               rtol=1e-5)


def _initializer_group_model_fn(features, labels, mode):
  """Groups a variable's `.initializer` into a Scaffold's init_op."""
  w = tf.compat.v1.get_variable(
      "w", [2, 1], initializer=tf.compat.v1.ones_initializer())
  init_op = tf.group(
      [w.initializer, tf.compat.v1.train.get_global_step().initializer])
  loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op,
                           scaffold=tf.compat.v1.train.Scaffold(
                               init_op=init_op))


def test_variable_initializer_grouped_in_model_fn(engine_name, caplog,
                                                  tmp_path):
  # A TypeError inside tf.group before (the eagerly made variables have no
  # initializer op in the traced graph).
  est = _train(engine_name, caplog, tmp_path, _initializer_group_model_fn)
  if est is not None:
    w = _after_two_steps(1.0)
    np.testing.assert_allclose(est.get_variable_value("w").ravel(), [w, w],
                               rtol=1e-6)


class _SaverHook(tf.compat.v1.train.SessionRunHook):
  """Saves `w` with a Saver of its own after the last of two steps."""

  def __init__(self, path):
    self._path = path

  def begin(self):
    self._saver = tf.compat.v1.train.Saver(
        [v for v in tf.compat.v1.global_variables() if v.name == "w:0"])

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(
        tf.compat.v1.train.get_global_step())

  def after_run(self, run_context, run_values):
    if run_values.results == 1:
      self._saver.save(run_context.session, self._path)


def test_a_saver_built_in_a_hook_begin(engine_name, caplog, tmp_path):
  # It was a TypeError ('sess' must be a Session) at the hook's save, after
  # steps had run and a checkpoint had been written.
  path = str(tmp_path / "hook" / "w.ckpt")
  est = _train(engine_name, caplog, tmp_path / "model", _model_fn(),
               hooks=[_SaverHook(path)])
  if est is None:
    assert not list((tmp_path / "model").glob("model.ckpt*"))
    return
  saved = tf.train.load_checkpoint(path).get_tensor("w")
  np.testing.assert_allclose(saved.ravel(), [_after_two_steps(1.0)] * 2,
                             rtol=1e-6)


class _LoadingHook(tf.compat.v1.train.SessionRunHook):
  """Loads 3.0 into `w` once the session exists (Variable.load)."""

  def begin(self):
    self._w = next(v for v in tf.compat.v1.global_variables()
                   if v.name == "w:0")

  def after_create_session(self, session, coord):
    self._w.load(np.full([2, 1], 3.0, np.float32), session)


def test_variable_load_in_after_create_session(engine_name, caplog, tmp_path):
  # It was an AttributeError inside TensorFlow (no initializer to feed).
  est = _train(engine_name, caplog, tmp_path, _model_fn(),
               hooks=[_LoadingHook()])
  if est is not None:
    np.testing.assert_allclose(est.get_variable_value("w").ravel(),
                               [_after_two_steps(3.0)] * 2, rtol=1e-6)


class _ExtraTrainOpHook(tf.compat.v1.train.SessionRunHook):
  """Runs its own train op before each step, as tensorflow-gan's
  RunTrainOpsHook runs a GAN's discriminator step."""

  def __init__(self, train_ops):
    self._train_ops = train_ops

  def before_run(self, run_context):
    run_context.session.run(self._train_ops)


def _model_fn_with_own_train_op_hook(features, labels, mode):
  w = tf.compat.v1.get_variable(
      "w", [2, 1], initializer=tf.compat.v1.ones_initializer())
  loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
  extra = optimizer.minimize(loss)  # reads the batch, writes w
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op,
                           training_hooks=[_ExtraTrainOpHook([extra])])


def test_a_hook_running_its_own_train_op(engine_name, caplog, tmp_path):
  # It was UnsupportedOnFunctionEngine at the first step, after model.ckpt-0
  # and the saving listeners' calls (tensorflow-gan's GANEstimator).
  est = _train(engine_name, caplog, tmp_path, _model_fn_with_own_train_op_hook)
  if est is None:
    assert not list(tmp_path.glob("model.ckpt*"))
    return
  # Each step: the hook's step, then the train op's.
  np.testing.assert_allclose(est.get_variable_value("w").ravel(),
                             [_after_two_steps(_after_two_steps(1.0))] * 2,
                             rtol=1e-6)


def test_a_hook_holding_the_loss_stays_on_the_function_engine(
    caplog, tmp_path, monkeypatch):
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)

  def model_fn(features, labels, mode):
    spec = _model_fn()(features, labels, mode)
    hook = tf.compat.v1.train.LoggingTensorHook({"loss": spec.loss},
                                                every_n_iter=1)
    return spec._replace(training_hooks=[hook])

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  with caplog.at_level(logging.INFO):
    est.train(_input_fn, steps=2)
  assert not sm.routed_to_graph(caplog)
  np.testing.assert_allclose(est.get_variable_value("w").ravel(),
                             [_after_two_steps(1.0)] * 2, rtol=1e-6)


def _model_fn_building_a_tf1_hub_module(features, labels, mode):
  if tf.inside_function():
    # What tensorflow_hub 0.13's hub.Module raised on the function engine,
    # built by hub.text_embedding_column in the v1 canned DNN's input layer
    # (finding G39; tensorflow_hub is not a dependency of these tests).
    raise RuntimeError(
        "Exception encountered when calling layer 'dnn'.\n\nvariable_scope "
        "dnn/input_layer/text_hub_module_embedding/module/ was unused but "
        "the corresponding name_scope was already taken.")
  return _model_fn()(features, labels, mode)


def test_a_tf1_hub_module_in_a_keras_layer(engine_name, caplog, tmp_path):
  est = _train(engine_name, caplog, tmp_path,
               _model_fn_building_a_tf1_hub_module)
  if est is not None:
    np.testing.assert_allclose(est.get_variable_value("w").ravel(),
                               [_after_two_steps(1.0)] * 2, rtol=1e-6)


def _model_fn_with_gradients_in_a_loop(features, labels, mode):
  # Per-example gradients summed in a tf.while_loop, as tensorflow-privacy's
  # DP optimizers compute per-microbatch gradients; their mean is the
  # gradient of the mean loss, so this trains as plain SGD.
  w = tf.compat.v1.get_variable(
      "w", [2, 1], initializer=tf.compat.v1.ones_initializer())
  per_example = tf.square(tf.matmul(features["x"], w) - labels)[:, 0]

  def body(i, total):
    loss_i = tf.reduce_mean(tf.gather(per_example, [i]))
    # Zeros for what it cannot reach: silently, where the variables are
    # held eagerly (finding G40).
    grad, = tf.gradients(loss_i, [w], unconnected_gradients="zero")
    return i + 1, total + grad

  _, total = tf.while_loop(lambda i, _: i < 4, body,
                           [tf.constant(0), tf.zeros([2, 1])])
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).apply_gradients(
      [(total / 4.0, w)], global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=tf.reduce_mean(per_example),
                           train_op=train_op)


def test_gradients_of_variables_inside_a_while_loop(engine_name, caplog,
                                                    tmp_path):
  # The function engine trained w with zero gradients, with no error.
  est = _train(engine_name, caplog, tmp_path,
               _model_fn_with_gradients_in_a_loop)
  if est is None:
    assert not list(tmp_path.glob("model.ckpt*"))
    return
  np.testing.assert_allclose(est.get_variable_value("w").ravel(),
                             [_after_two_steps(1.0)] * 2, rtol=1e-6)


class _Tower(tf.keras.Model):
  """A tf-keras model given an explicit name, as the canned DNN's is."""

  def __init__(self):
    super().__init__(name="tower")
    self.dense = tf.keras.layers.Dense(
        1, kernel_initializer="ones", use_bias=False)

  def call(self, inputs):
    return self.dense(inputs)


def _model_fn_with_two_towers_of_one_name(features, labels, mode):
  # neural-structured-learning's adversarial regularization calls a canned
  # DNN's model_fn twice: two tf-keras models named `dnn` (finding G41).
  outputs = _Tower()(features["x"]) + _Tower()(features["x"])
  loss = tf.reduce_mean(tf.square(outputs - labels))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_two_keras_models_of_one_name(engine_name, caplog, tmp_path):
  # Traced, the second model's variables were `tower/dense_1/kernel`; TF1
  # named them under `tower_1/`.
  est = _train(engine_name, caplog, tmp_path,
               _model_fn_with_two_towers_of_one_name)
  if est is None:
    assert not list(tmp_path.glob("model.ckpt*"))
    return
  names = [n for n in est.get_variable_names() if "kernel" in n]
  assert names == ["tower/dense/kernel", "tower_1/dense_1/kernel"], names
