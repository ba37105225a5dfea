"""A one-variable model_fn whose Scaffold sets one field, for routing tests.

`w` starts at 1.0 and never trains (learning rate 0), so what a Scaffold
field does to it shows in the checkpoint, the eval metric `w` and the
predictions `x * w`. The expected values were recorded with the real
Estimator (TF 2.15.1, tensorflow-estimator 2.15.0).
"""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.util import event_pb2

import estimator_compat as tfe

FIELDS = ("saver", "saver_collection", "init_fn", "init_op", "init_feed_dict",
          "ready_op", "ready_for_local_init_op", "local_init_op",
          "summary_op")


def _scaffold_args(field, w, gs):
  """Scaffold keyword arguments that set `field` (and the ops they need)."""
  if field == "saver":
    return {"saver": tf.compat.v1.train.Saver(max_to_keep=1)}
  if field == "saver_collection":  # What Scaffold.finalize() picks up.
    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SAVERS,
                                   tf.compat.v1.train.Saver(max_to_keep=2))
    return {}
  if field == "init_fn":
    assign = w.assign(3.0)
    return {"init_fn": lambda scaffold, session: session.run(assign)}
  if field == "init_op":
    return {"init_op": tf.group(w.assign(7.0), tf.compat.v1.assign(gs, 0))}
  if field == "init_feed_dict":
    value = tf.compat.v1.placeholder(tf.float32, [])
    return {"init_op": tf.group(w.assign(value), tf.compat.v1.assign(gs, 0)),
            "init_feed_dict": {value: 9.0}}
  if field in ("ready_op", "ready_for_local_init_op"):
    return {field: tf.constant(["never ready"])}
  if field == "local_init_op":
    return {"local_init_op": tf.group(
        tf.compat.v1.local_variables_initializer(), w.assign_add(100.0))}
  if field == "summary_op":
    return {"summary_op": tf.compat.v1.summary.scalar("custom", w * 2.0)}
  return {}


def model_fn(features, labels, mode, params):
  w = tf.compat.v1.get_variable(
      "w", [], initializer=tf.compat.v1.constant_initializer(1.0))
  gs = tf.compat.v1.train.get_global_step()
  scaffold = tf.compat.v1.train.Scaffold(
      **_scaffold_args(params.get("field"), w, gs))
  predictions = {"p": features["x"] * w}
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions=predictions,
                             scaffold=scaffold)
  loss = tf.reduce_mean(tf.square(predictions["p"] - labels))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.0).minimize(
      loss, global_step=gs)
  return tfe.EstimatorSpec(
      mode, loss=loss, train_op=train_op, scaffold=scaffold,
      eval_metric_ops={"w": tf.compat.v1.metrics.mean(w)})


def input_fn():
  x = np.arange(4, dtype=np.float32)[:, None]
  return tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).batch(2)


def estimator(model_dir, field=None, **config):
  return tfe.Estimator(
      model_fn, model_dir=str(model_dir), params={"field": field},
      config=tfe.RunConfig(save_checkpoints_steps=1, save_summary_steps=1,
                           **config))


def predictions(est):
  return [float(np.ravel(p["p"])[0]) for p in est.predict(input_fn)]


def checkpoint_steps(model_dir):
  return sorted(int(os.path.basename(f).split("-")[1].split(".")[0])
                for f in glob.glob(os.path.join(str(model_dir), "*.index")))


def summary_tags(model_dir):
  """Tags of the summaries in model_dir's events files."""
  with tf.Graph().as_default():
    tf.compat.v1.summary.FileWriterCache.get(str(model_dir)).flush()
  tags = set()
  for path in glob.glob(os.path.join(str(model_dir), "events.*")):
    for record in tf.compat.v1.io.tf_record_iterator(path):
      tags.update(v.tag for v in event_pb2.Event.FromString(record).summary.value)
  return sorted(tags)


@pytest.fixture(autouse=True)
def default_engine(monkeypatch):
  """No $ESTIMATOR_COMPAT_ENGINE: the default engine picks each call's."""
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)


def routed_to_graph(caplog) -> list:
  """The log lines saying a call ran on the graph engine instead."""
  return [r.getMessage() for r in caplog.records
          if "on the graph engine" in r.getMessage()]
