"""The benchmark model on the REAL Estimator (run with TF 2.15's python).

  ~/.cache/estimator-compat/tf215-venv/bin/python benchmarks/real_estimator.py 1000 3

Prints one line: the steps/s of each run. benchmarks/engines.py calls it when
given --real_estimator_python.
"""

import sys
import tempfile
import time

import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode):
  hidden = tf.compat.v1.layers.dense(features["x"], 128, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(hidden, 10)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  rng = np.random.RandomState(0)
  x = rng.rand(4096, 784).astype(np.float32)
  y = rng.randint(0, 10, 4096).astype(np.int64)
  return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(
      256).prefetch(4)


def main(steps: int, repeats: int) -> None:
  runs = []
  for _ in range(repeats):
    config = tf.estimator.RunConfig(
        model_dir=tempfile.mkdtemp(), save_checkpoints_steps=10 ** 9,
        save_summary_steps=0, log_step_count_steps=10 ** 9)
    estimator = tf.estimator.Estimator(model_fn, config=config)
    estimator.train(input_fn, steps=10)  # warm-up
    start = time.perf_counter()
    estimator.train(input_fn, steps=steps)
    runs.append(steps / (time.perf_counter() - start))
  print(" ".join(f"{r:.1f}" for r in runs))


if __name__ == "__main__":
  main(int(sys.argv[1]), int(sys.argv[2]))
