"""Parameter-server training's loss: NaN and log lines (one process).

  python tests/ps_loss_program.py MODEL_DIR

Starts an in-process loopback cluster (2 ps, 2 workers) and runs as its
chief, at the default RunConfig (one step per closure). First a model whose
loss turns NaN from global step 30 on: train() must raise
NanLossDuringTrainingError and write no checkpoint after the start's.
Then, on the same cluster (the coordinator must have let the failure go),
a finite model trains 250 steps. Prints `NAN <error type>`, `CHECKPOINTS
[...]` of the NaN run's directory, `FINAL_LOSS <the last "Loss for final
step" value>`, `LOSS_LINES <the "loss = ..." log lines' losses and
steps>` and `LOSS_SUMMARIES <the "loss" summaries' steps and values>`.
"""

import json
import logging
import os
import re
import sys

import numpy as np
import tensorflow as tf

# Its directory is this script's, first on sys.path.
from model_fn_calls_program import input_fn, start_cluster  # pylint: disable=g-bad-import-order


def model_fn(features, labels, mode, params):
  logits = tf.compat.v1.layers.dense(features, 3)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  step = tf.compat.v1.train.get_global_step()
  if params["nan_from"] is not None:
    loss = tf.where(step >= params["nan_from"], loss * np.nan, loss)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
      loss, global_step=step)
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class _Lines(logging.Handler):

  def __init__(self):
    super().__init__()
    self.messages = []

  def emit(self, record):
    self.messages.append(record.getMessage())


def main(model_dir: str) -> None:
  start_cluster(workers=2)
  import estimator_compat  # pylint: disable=g-import-not-at-top
  estimator_compat.install()
  from estimator_compat.distribute import flags  # pylint: disable=g-import-not-at-top
  flags.apply([sys.argv[0], "--strategy=parameter_server"])
  lines = _Lines()
  tf.get_logger().addHandler(lines)
  tf.get_logger().setLevel(logging.INFO)
  nan_dir = os.path.join(model_dir, "nan")
  estimator = tf.estimator.Estimator(
      model_fn, params={"nan_from": 30},
      config=tf.estimator.RunConfig(model_dir=nan_dir, tf_random_seed=1))
  try:
    estimator.train(input_fn, steps=200)
    print("NAN none", flush=True)
  except Exception as e:  # pylint: disable=broad-except
    print("NAN " + type(e).__name__, flush=True)
  print("CHECKPOINTS " + json.dumps(sorted(
      f for f in os.listdir(nan_dir) if f.endswith(".index"))), flush=True)
  del lines.messages[:]
  estimator = tf.estimator.Estimator(
      model_fn, params={"nan_from": None},
      config=tf.estimator.RunConfig(model_dir=os.path.join(model_dir, "ok"),
                                    tf_random_seed=1))
  estimator.train(input_fn, steps=250)
  finals = [m for m in lines.messages if m.startswith("Loss for final step")]
  print("FINAL_LOSS " + finals[-1].split(": ", 1)[1].rstrip("."), flush=True)
  losses = [re.match(r"loss = (\S+), step = (\d+)", m)
            for m in lines.messages]
  print("LOSS_LINES " + json.dumps(
      [[m.group(1).rstrip(","), int(m.group(2))] for m in losses if m]),
        flush=True)
  summaries = []
  for name in sorted(os.listdir(os.path.join(model_dir, "ok"))):
    if name.startswith("events.out.tfevents"):
      for event in tf.compat.v1.train.summary_iterator(
          os.path.join(model_dir, "ok", name)):
        summaries += [[event.step, v.simple_value] for v in event.summary.value
                      if v.tag == "loss"]
  print("LOSS_SUMMARIES " + json.dumps(summaries), flush=True)
  sys.stdout.flush()
  os._exit(0)  # pylint: disable=protected-access  # in-process servers never stop


if __name__ == "__main__":
  main(sys.argv[1])
