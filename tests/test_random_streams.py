"""TF1 random ops on the function engine: one stream per op, as in a Session.

A Session kept each random op's Philox state in its one kernel, so step k
drew the op's k-th values; the function engine runs steps through several
functions (hooks' fetch sets, many steps per call) and must still continue
one stream per op (engines/function/random_streams.py). The graph engine,
a TF1 Session like the Estimator's, is the reference: explicitly seeded
ops draw the same values on both engines, at any steps_per_loop.
"""

import logging

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.errors import NeedsGraphEngine
from tests import models

_KINDS = {
    "uniform": lambda: tf.random.uniform([2, 3], seed=3),
    "normal": lambda: tf.random.normal([4], seed=4),
    "truncated": lambda: tf.random.truncated_normal([3], seed=5),
    "int": lambda: tf.cast(tf.random.uniform([5], 0, 1000, tf.int64, seed=6),
                           tf.float32),
}


def _noisy_fn(extra=None):
  """A linear model with dropout whose train_op adds each kind's draws to a
  variable, and whose eval metrics average them."""

  def model_fn(features, labels, mode):
    x = tf.nn.dropout(features["x"], rate=0.5, seed=7)
    logits = tf.compat.v1.layers.dense(x, models.CLASSES)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    draws = {name: tf.reshape(make(), [-1]) for name, make in _KINDS.items()}
    if extra is not None:
      draws["extra"] = tf.reshape(tf.cast(extra(), tf.float32), [-1])
    sums = []
    for name, value in draws.items():
      total = tf.compat.v1.get_variable(
          f"sum_{name}", value.shape, trainable=False,
          initializer=tf.compat.v1.zeros_initializer())
      sums.append(total.assign_add(value))
    train_op = tf.group(
        tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()), *sums)
    metrics = {name: tf.compat.v1.metrics.mean_tensor(value)
               for name, value in draws.items()}
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op,
                             eval_metric_ops=metrics)

  return model_fn


def _run(tmp_path, engine, steps_per_loop, model_fn=None):
  model_dir = tmp_path / f"{engine}_{steps_per_loop}"
  est = tfe.Estimator(
      model_fn or _noisy_fn(), model_dir=str(model_dir),
      config=tfe.RunConfig(tf_random_seed=1, engine=engine,
                           steps_per_loop=steps_per_loop,
                           save_summary_steps=5, log_step_count_steps=7))
  est.train(models.input_fn(), steps=23)
  reader = tf.train.load_checkpoint(str(model_dir))
  sums = {name: reader.get_tensor(f"sum_{name}") for name in _KINDS}
  metrics = est.evaluate(models.input_fn(), steps=9)
  return sums, {name: metrics[name] for name in _KINDS}


def test_seeded_random_ops_draw_the_session_streams(tmp_path):
  graph = _run(tmp_path, "graph", None)
  for steps_per_loop in (None, 1):
    function = _run(tmp_path, "function", steps_per_loop)
    for part in (0, 1):  # training sums, evaluation means
      for name in _KINDS:
        np.testing.assert_array_equal(function[part][name], graph[part][name],
                                      err_msg=f"{name} {steps_per_loop}")


def test_the_checkpoint_holds_no_stream_state(tmp_path):
  est = tfe.Estimator(_noisy_fn(), model_dir=str(tmp_path),
                      config=tfe.RunConfig(engine="function"))
  est.train(models.input_fn(), steps=2)
  names = tf.train.load_checkpoint(str(tmp_path)).get_variable_to_shape_map()
  assert not [n for n in names if "stream" in n], sorted(names)


def _categorical():
  return tf.random.categorical(tf.zeros([1, 4]), 2, seed=8)


def _in_a_cond():
  return tf.cond(tf.constant(True), lambda: tf.random.uniform([2], seed=9),
                 lambda: tf.zeros([2]))


def _candidate_sampler():
  # nce_loss's and sampled_softmax_loss's sampler: under the function engine
  # each step function restarted its stream (TF 2.15 drew [6, 0, 3, 45, 1],
  # [6, 0, 5, 13, 1], ...; here the first draw came twice).
  return tf.random.log_uniform_candidate_sampler(
      tf.zeros([1, 1], tf.int64), 1, 3, True, 10, seed=10).sampled_candidates


@pytest.mark.parametrize("extra", [_categorical, _in_a_cond,
                                   _candidate_sampler])
def test_other_kernel_state_random_ops_need_the_graph_engine(
    tmp_path, extra, caplog):
  est = tfe.Estimator(_noisy_fn(extra), model_dir=str(tmp_path / "f"),
                      config=tfe.RunConfig(engine="function"))
  with pytest.raises(NeedsGraphEngine, match="random ops whose state lives"):
    est.train(models.input_fn(), steps=2)
  assert not models.checkpoint_files(str(tmp_path / "f"))
  # The default engine runs the call on the graph engine, saying why.
  default = tfe.Estimator(_noisy_fn(extra), model_dir=str(tmp_path / "d"))
  with caplog.at_level(logging.WARNING):
    default.train(models.input_fn(), steps=2)
  assert "random ops whose state lives" in caplog.text
  assert models.checkpoint_files(str(tmp_path / "d"))
