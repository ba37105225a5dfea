"""A stand-in for tensorflow_datasets: synthetic data instead of downloads.

Only what the TF docs' Estimator tutorials call: `Split` and
`load(name, split=..., as_supervised=True)` for 'iris' (150 rows of 4
float32 features in 3 separable clusters, int64 labels). Test harness:
put this folder first on PYTHONPATH.
"""

import enum

import numpy as np
import tensorflow as tf


class Split(str, enum.Enum):
  TRAIN = "train"
  TEST = "test"
  VALIDATION = "validation"


def _iris():
  rng = np.random.RandomState(7)
  labels = np.repeat(np.arange(3), 50).astype(np.int64)
  centers = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3],
                      [6.6, 3.0, 5.6, 2.0]], np.float32)
  features = centers[labels] + rng.normal(scale=0.3, size=(150, 4))
  order = rng.permutation(150)
  return features[order].astype(np.float32), labels[order]


def load(name, split=None, as_supervised=False, **kwargs):
  """The synthetic data set `name` as a tf.data.Dataset."""
  del split, kwargs
  if name != "iris":
    raise ValueError(f"tfds stand-in: no synthetic data set {name!r}.")
  features, labels = _iris()
  if as_supervised:
    return tf.data.Dataset.from_tensor_slices((features, labels))
  return tf.data.Dataset.from_tensor_slices(
      {"features": features, "label": labels})
