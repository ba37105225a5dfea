"""A step's summary of a variable holds its value before the step (G16).

A TF1 summary reads the variable with an op of its own, unordered with the
optimizer's update in the same Session.run; TF 2.15 ran either first (the
real Estimator wrote `bias` before the update on some steps, after it on
others). Here the read comes first on every run. The model_fn below delays
the read (a sleeping py_function before it), which made the update win on
every step before the fix, on both engines.
"""

import glob
import time

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

_X = np.arange(4, dtype=np.float32).reshape(4, 1)
_STEPS = 3


def _input_fn():
  return {"x": tf.constant(_X)}, tf.constant(2.0 * _X)


def _slow_zero():
  time.sleep(0.05)
  return np.float32(0.0)


def _model_fn(read):
  """A model_fn whose summary reads `v` (a plain read, in a cond, or after
  the train op), late: after a sleep."""
  def model_fn(features, labels, mode):
    v = tf.compat.v1.get_variable(
        "v", [], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(features["x"] * v - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    slow = tf.py_function(_slow_zero, [], tf.float32)
    waits = [slow, train_op] if read == "after_train_op" else [slow]
    with tf.control_dependencies(waits):
      if read == "cond":  # as the canned linear's fraction_of_zero_weights
        value = tf.compat.v1.cond(tf.constant(True), lambda: v * 1.0,
                                  lambda: tf.constant(0.0))
      else:
        value = v.read_value()
    tf.compat.v1.summary.scalar("v_value", value)
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)
  return model_fn


class _ValuesAfterSteps(tfe.SessionRunHook):
  """`v` after each step, read by a session.run of its own."""

  def __init__(self):
    self.values = []

  def begin(self):
    self._v = [x for x in tf.compat.v1.global_variables()
               if x.name == "v:0"][0]

  def after_run(self, run_context, run_values):
    self.values.append(float(run_context.session.run(self._v)))


def _train(model_dir, read):
  estimator = tfe.Estimator(_model_fn(read), str(model_dir),
                            config=tfe.RunConfig(
                                save_summary_steps=1,
                                save_checkpoints_steps=None,
                                save_checkpoints_secs=None,
                                log_step_count_steps=None))
  hook = _ValuesAfterSteps()
  estimator.train(_input_fn, steps=_STEPS, hooks=[hook])
  tf.compat.v1.summary.FileWriterCache.clear()
  written = {}
  for path in glob.glob(f"{model_dir}/events.out.tfevents*"):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.tag == "v_value":
          written[event.step] = value.simple_value
  return [written.get(step) for step in range(1, _STEPS + 1)], hook.values


@pytest.mark.parametrize("read", ["read", "cond"])
def test_a_summary_reads_the_variable_before_the_update(tmp_path, engine,
                                                        read):
  written, after = _train(tmp_path, read)
  before = [0.0] + after[:-1]
  assert len(set(after)) == _STEPS  # each step moves v
  np.testing.assert_allclose(written, before, rtol=1e-6)


def test_a_summary_made_after_the_train_op_reads_after(tmp_path, engine):
  written, after = _train(tmp_path, "after_train_op")
  np.testing.assert_allclose(written, after, rtol=1e-6)
