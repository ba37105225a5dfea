"""Small deterministic data shared by the golden programs (numpy only)."""

import numpy as np


def classification(rows: int, features: int, classes: int, seed: int):
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(rows, features)).astype(np.float32)
  w = rng.normal(size=(features, classes)).astype(np.float32)
  y = np.argmax(x @ w, axis=1).astype(np.int64)
  return x, y
