r"""Threads and memory over many rounds of train + evaluate + predict.

  PYTHONPATH=. python benchmarks/long_process.py [--rounds=200] [--every=10]
      [--engine=function] [--gc]

One process, one model_dir, one Estimator per round (as a service that
retrains would): each round trains 5 steps, evaluates and predicts once.
Prints the OS threads (/proc/self/task) and the resident memory (RSS) every
`--every` rounds, and the change from round 10; `--gc` runs gc.collect()
after each round (what freed the threads before the fix).
"""

import argparse
import gc
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import estimator_compat  # noqa: F401  pylint: disable=g-import-not-at-top,wrong-import-position,unused-import
from tests import models  # pylint: disable=g-import-not-at-top,wrong-import-position


def _threads() -> int:
  return len(os.listdir("/proc/self/task"))


def _rss_mb() -> float:
  with open("/proc/self/status") as f:
    for line in f:
      if line.startswith("VmRSS:"):
        return int(line.split()[1]) / 1024
  return float("nan")


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--rounds", type=int, default=200)
  parser.add_argument("--every", type=int, default=10)
  parser.add_argument("--engine", default="function")
  parser.add_argument("--gc", action="store_true")
  args = parser.parse_args()
  model_dir = tempfile.mkdtemp(prefix="long_process_")
  base = None
  for round_ in range(1, args.rounds + 1):
    est = models.estimator(model_dir, engine=args.engine,
                           log_step_count_steps=None, save_summary_steps=None)
    est.train(models.input_fn(), steps=5)
    est.evaluate(models.input_fn(num_epochs=1), steps=2)
    list(est.predict(models.input_fn(num_epochs=1, labels=False)))
    if args.gc:
      gc.collect()
    if round_ == 10:
      base = (_threads(), _rss_mb())
    if round_ % args.every == 0 or round_ == 1:
      threads, rss = _threads(), _rss_mb()
      change = ""
      if base:
        change = (f"  vs round 10: threads {threads - base[0]:+d}, RSS "
                  f"{100 * (rss / base[1] - 1):+.1f}%")
      print(f"round {round_}: threads {threads}, RSS {rss:.0f} MB{change}",
            flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
