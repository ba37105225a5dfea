"""The benchmark model on the REAL Estimator (run with TF 2.15's python).

  ~/.cache/estimator-compat/tf215-venv/bin/python benchmarks/real_estimator.py 1000 3

Prints one line: the steps/s of each run. benchmarks/engines.py calls it when
given --real_estimator_python. With `STEPS EVAL_STEPS default_config` it
trains, evaluates and predicts once at the default RunConfig and prints the
three rates (benchmarks/default_config.py).
"""

import os
import sys
import tempfile
import time
from typing import Dict, Optional

import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_model import input_fn, model_fn  # pylint: disable=g-import-not-at-top,wrong-import-position

REFERENCE_PYTHON = os.path.expanduser(
    "~/.cache/estimator-compat/tf215-venv/bin/python")


def reference_python(given: Optional[str]) -> Optional[str]:
  """The TF 2.15 python to run: `given`, else REFERENCE_PYTHON if it exists."""
  if given:
    return given
  return REFERENCE_PYTHON if os.path.exists(REFERENCE_PYTHON) else None


def reference_env() -> Dict[str, str]:
  """The environment of a subprocess on the reference python.

  Quiet C++ logs; no TF_USE_LEGACY_KERAS (TF 2.15 has no tf-keras there) and
  no PYTHONPATH (this checkout's packages stay out of the reference venv).
  """
  return {k: v for k, v in dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3").items()
          if k not in ("TF_USE_LEGACY_KERAS", "PYTHONPATH")}


def default_config(steps: int, eval_steps: int) -> None:
  """One run at the default RunConfig: prints train and evaluate steps/s."""
  estimator = tf.estimator.Estimator(
      model_fn, config=tf.estimator.RunConfig(model_dir=tempfile.mkdtemp()))
  estimator.train(input_fn, steps=10)  # warm-up
  start = time.perf_counter()
  estimator.train(input_fn, steps=steps)
  train_rate = steps / (time.perf_counter() - start)
  estimator.evaluate(input_fn, steps=10)  # warm-up
  start = time.perf_counter()
  estimator.evaluate(input_fn, steps=eval_steps)
  eval_rate = eval_steps / (time.perf_counter() - start)
  predict_rate = predict_batches_per_second(estimator, eval_steps)
  print(f"{train_rate:.1f} {eval_rate:.1f} {predict_rate:.1f}")


def predict_batches_per_second(estimator, batches: int) -> float:
  """predict() over `batches` batches, whole batches (no per-example loop)."""
  def batches_fn(n):
    return lambda: input_fn().take(n)

  for _ in estimator.predict(batches_fn(10), yield_single_examples=False):
    pass  # warm-up
  start = time.perf_counter()
  for _ in estimator.predict(batches_fn(batches), yield_single_examples=False):
    pass
  return batches / (time.perf_counter() - start)


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
  if len(sys.argv) > 3 and sys.argv[3] == "default_config":
    # benchmarks/default_config.py: STEPS EVAL_STEPS default_config
    default_config(int(sys.argv[1]), int(sys.argv[2]))
  else:
    main(int(sys.argv[1]), int(sys.argv[2]))
