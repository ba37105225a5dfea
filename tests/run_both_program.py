"""A small legacy Estimator program for `migration diff` and `run-both` tests.

  python tests/run_both_program.py --model_dir=DIR [--steps=10]

Unchanged legacy code: runs on TF 2.15 with the real Estimator, and here
after estimator_compat.install(). Trains a one-layer classifier with Adam
(slots in the checkpoints), evaluates, exports a SavedModel and prints the
evaluation results.
"""

import argparse

import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode, params):
  hidden = tf.compat.v1.layers.dense(features["x"], 4, activation=tf.nn.relu,
                                     name="hidden")
  logits = tf.compat.v1.layers.dense(hidden, 2, name="logits")
  classes = tf.argmax(logits, axis=1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(
        mode, predictions={"classes": classes, "logits": logits})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  tf.compat.v1.summary.scalar("mean_logit", tf.reduce_mean(logits))
  metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)}
  optimizer = tf.compat.v1.train.AdamOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops=metrics)


def _data():
  rng = np.random.RandomState(0)
  x = rng.normal(size=(64, 3)).astype(np.float32)
  y = (x.sum(axis=1) > 0).astype(np.int32)
  return x, y


def input_fn(repeat: bool):
  x, y = _data()
  dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)
  return dataset.repeat() if repeat else dataset


def serving_input_receiver_fn():
  x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
  return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def run(model_dir: str, steps: int = 10):
  """Trains, evaluates and exports in model_dir; returns the eval results."""
  config = tf.estimator.RunConfig(tf_random_seed=7, save_checkpoints_steps=5,
                                  save_summary_steps=2,
                                  log_step_count_steps=5)
  estimator = tf.estimator.Estimator(model_fn, model_dir, config,
                                     params={"learning_rate": 0.05})
  estimator.train(lambda: input_fn(True), steps=steps)
  results = estimator.evaluate(lambda: input_fn(False))
  estimator.export_saved_model(f"{model_dir}/export/exporter",
                               serving_input_receiver_fn)
  return results


def main() -> None:
  parser = argparse.ArgumentParser()
  parser.add_argument("--model_dir", required=True)
  parser.add_argument("--steps", type=int, default=10)
  args = parser.parse_args()
  results = run(args.model_dir, args.steps)
  print({k: results[k] for k in sorted(results)})


if __name__ == "__main__":
  main()
