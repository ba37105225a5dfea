"""`tf.Variable(..., collections=...)` in model_fn, as a TF1 graph made it.

The TF2 `tf.Variable` takes no `collections` argument and passes it on
unread, so in the Estimator's TF1 graph (TF 2.15, run by hand) a
`tf.Variable(5., collections=[LOCAL_VARIABLES])` was a global variable:
saved in each checkpoint and restored by the next call. The function engine
honoured the argument (only `tf.compat.v1.Variable` does), so the variable
was local: left out of the checkpoint and back at 5 in every call, with no
error (finding G35). A `tf.compat.v1.Variable` given the same collections
stays local, as it was in TF 2.15.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

_X = (np.arange(32, dtype=np.float32).reshape(8, 4) / 32) - 0.4
_Y = np.array([[1.], [0.], [1.], [1.], [0.], [1.], [0.], [0.]], np.float32)
_LOCAL = [tf.compat.v1.GraphKeys.LOCAL_VARIABLES]


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


def _model_fn(features, labels, mode):
  """Counts steps in two variables asked to be local, made two ways."""
  tf2_count = tf.Variable(5., trainable=False, name="tf2_count",
                          collections=_LOCAL)
  v1_count = tf.compat.v1.Variable(7., trainable=False, name="v1_count",
                                   collections=_LOCAL)
  logits = tf.compat.v1.layers.dense(
      features["x"], 1, kernel_initializer=tf.compat.v1.ones_initializer())
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  if mode == tfe.ModeKeys.EVAL:
    return tfe.EstimatorSpec(mode, loss=loss, eval_metric_ops={
        "tf2_count": tf.compat.v1.metrics.mean(tf2_count),
        "v1_count": tf.compat.v1.metrics.mean(v1_count)})
  train_op = tf.group(
      tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
          loss, global_step=tf.compat.v1.train.get_global_step()),
      tf2_count.assign_add(1.), v1_count.assign_add(1.))
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _run(model_dir, engine):
  estimator = tfe.Estimator(_model_fn, str(model_dir),
                            config=tfe.RunConfig(engine=engine))
  estimator.train(_input_fn, steps=3)
  estimator.train(_input_fn, steps=2)  # restores tf2_count by name
  metrics = estimator.evaluate(_input_fn, steps=1)
  return metrics, dict(tf.train.list_variables(str(model_dir)))


@pytest.mark.parametrize("engine", [None, "function", "graph"])
def test_tf2_variable_ignores_collections_as_in_a_tf1_graph(engine, tmp_path):
  metrics, saved = _run(tmp_path, engine)
  assert "tf2_count" in saved and "v1_count" not in saved
  reader = tf.train.load_checkpoint(str(tmp_path))
  assert reader.get_tensor("tf2_count") == 10.  # 5 + 3 + 2 steps
  assert metrics["tf2_count"] == 10.
  assert metrics["v1_count"] == 7.  # local: a fresh one in evaluate()
