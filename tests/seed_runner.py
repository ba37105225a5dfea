"""Runs the seed program unchanged, with numpy seeded first.

The seed program draws its data from np.random without a seed; seeding here
gives every process of a cluster (and the single-process reference) the same
data, so their accuracies can be compared. Usage:
  python tests/seed_runner.py [the seed program's flags...]
"""

import os
import runpy
import sys

import numpy as np

SEED_PROGRAM = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "examples", "seed",
                            "distributed_training_seed.py")
DATA_SEED = 1234


def data():
  """The arrays the seed program draws after np.random.seed(DATA_SEED)."""
  rng_state = np.random.get_state()
  np.random.seed(DATA_SEED)
  x = np.random.random((1000, 10))
  y = np.random.randint(0, 10, 1000)
  np.random.set_state(rng_state)
  return x, y


if __name__ == "__main__":
  np.random.seed(DATA_SEED)
  sys.argv[0] = SEED_PROGRAM
  runpy.run_path(SEED_PROGRAM, run_name="__main__")
