"""Hooks: spec training hooks, chief hooks, train() hooks and listeners.

What the hooks saw is the program's `observations()`, compared like any other
result.
"""

import tensorflow as tf

from tests.golden_programs import _data

TRAIN_STEPS = 30
CONFIG = dict(tf_random_seed=3, save_checkpoints_steps=10,
              log_step_count_steps=10)
PARAMS = None
X, Y = _data.classification(120, 5, 2, seed=4)
_SEEN = {"losses": [], "steps": [], "saves": [], "chief_begin": 0}


class _LossRecorder(tf.compat.v1.train.SessionRunHook):
  """Asks for the loss tensor by name through SessionRunArgs."""

  def __init__(self, loss):
    self._loss = loss

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(self._loss)

  def after_run(self, run_context, run_values):
    _SEEN["losses"].append(float(run_values.results))


class _ChiefCounter(tf.compat.v1.train.SessionRunHook):

  def begin(self):
    _SEEN["chief_begin"] += 1


class _StepRecorder(tf.estimator.SessionRunHook):
  """Reads global_step after every run (a read inside the training run races
  with the increment, so it is read in a separate call) and stops at 24."""

  def begin(self):
    self._step = tf.compat.v1.train.get_global_step()

  def after_run(self, run_context, run_values):
    step = int(run_context.session.run(self._step))
    _SEEN["steps"].append(step)
    if step >= 24:
      run_context.request_stop()


class _SaveRecorder(tf.estimator.CheckpointSaverListener):

  def after_save(self, session, global_step_value):
    _SEEN["saves"].append(int(global_step_value))


def model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features["x"], 2)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(
      mode, loss=loss, train_op=train_op,
      training_hooks=[_LossRecorder(loss)],
      training_chief_hooks=[_ChiefCounter()])


def train_hooks():
  return [_StepRecorder()]


def saving_listeners():
  return [_SaveRecorder()]


def reset():
  """Forgets what earlier runs in this process observed."""
  _SEEN.update(losses=[], steps=[], saves=[], chief_begin=0)


def observations():
  return {key: (list(value) if isinstance(value, list) else value)
          for key, value in _SEEN.items()}


train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    {"x": X}, Y, batch_size=16, num_epochs=None, shuffle=False)
eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    {"x": X}, Y, batch_size=40, num_epochs=1, shuffle=False)
predict_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    {"x": X[:6]}, batch_size=6, num_epochs=1, shuffle=False)
