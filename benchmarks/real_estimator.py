"""The benchmark model on the REAL Estimator (run with TF 2.15's python).

  ~/.cache/estimator-compat/tf215-venv/bin/python benchmarks/real_estimator.py 1000 3

Prints one line: the steps/s of each run. benchmarks/engines.py calls it when
given --real_estimator_python.
"""

import os
import sys
import tempfile
import time

import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_model import input_fn, model_fn  # pylint: disable=g-import-not-at-top,wrong-import-position


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
