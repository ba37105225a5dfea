"""Train, evaluate and predict with TF1 random ops on 16 inter-op threads.

Run by tests/test_loop_order.py in a process of its own (the thread count
is fixed before TensorFlow starts). Each mode runs at steps_per_loop=None
(many steps or batches per function call) and at 1; the program prints, as
one JSON line, what each gave. With many threads, the executor runs ops of
different loop iterations at once wherever nothing orders them: a step that
does not wait for the previous one draws the wrong random values.
"""

import json
import sys
import tempfile

import tensorflow as tf

tf.config.threading.set_inter_op_parallelism_threads(16)

# pylint: disable=g-import-not-at-top,wrong-import-position
import estimator_compat as tfe
from estimator_compat.engines import call_sizer
from estimator_compat.engines import controller
from tests import models

ROWS = 300  # One row per batch: many loop iterations, little work in each.


def model_fn(features, labels, mode, params):
  x = features["x"]
  hidden = tf.compat.v1.layers.dense(x, 8, activation=tf.nn.relu)
  # A TF1 random op in every mode (dropout in training).
  hidden = tf.nn.dropout(hidden, rate=0.5, seed=5)
  logits = tf.compat.v1.layers.dense(hidden, models.CLASSES)
  noise = tf.random.uniform([2], seed=3)
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions={"logits": logits,
                                                "noise": noise})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(
      mode, loss=loss, train_op=train_op,
      eval_metric_ops={"noise": tf.compat.v1.metrics.mean(noise[0]),
                       "last": (tf.identity(noise[0]),
                                tf.identity(noise[0]))})


input_fn = models.input_fn(batch_size=1, rows=ROWS, num_epochs=1)


def run(steps_per_loop):
  model_dir = tempfile.mkdtemp()
  est = models.estimator(model_dir, model_fn=model_fn, engine="function",
                         steps_per_loop=steps_per_loop,
                         save_checkpoints_steps=100)
  est.train(input_fn)
  weights = {name: est.get_variable_value(name).tolist()
             for name in est.get_variable_names()
             if name.startswith("dense")}
  metrics = est.evaluate(input_fn)
  predictions = [p["noise"].tolist() for p in est.predict(
      models.input_fn(batch_size=1, rows=ROWS, num_epochs=1, labels=False),
      yield_single_examples=False)]
  return {"weights": weights,
          "metrics": {k: float(v) for k, v in metrics.items()},
          "predictions": predictions}


def main():
  controller.SINGLE_BATCHES_FIRST = 0  # Batched from the second batch on.
  calls = []
  original = call_sizer.CallSizer.record

  def record(self, steps, seconds):
    calls.append(steps)
    original(self, steps, seconds)

  call_sizer.CallSizer.record = record
  out = {str(steps_per_loop): run(steps_per_loop)
         for steps_per_loop in (None, 1)}
  out["most_steps_per_call"] = max(calls)
  print(json.dumps(out))


if __name__ == "__main__":
  sys.exit(main())
