"""Tiny data, columns and inputs of the LinearSDCA goldens.

SDCA's kernel visits a batch's examples in a random order on several
threads, on the real Estimator as here, so a run is reproducible only once
it has converged: the programs train the whole (tiny) data set as one batch
for enough steps that the weights sit at the optimum.
"""

import numpy as np
import tensorflow as tf

N = 16
_RNG = np.random.RandomState(5)
COLORS = ["red", "green", "blue"]
FEATURES = {
    "example_id": np.array([f"e{i}" for i in range(N)]),
    "price": _RNG.uniform(0.0, 2.0, size=(N, 1)).astype(np.float32),
    "size": _RNG.uniform(10.0, 40.0, size=(N, 1)).astype(np.float32),
    "color": _RNG.choice(COLORS + ["other"], size=(N, 1)),
    "city": _RNG.choice(["a", "b", "c", "d", "e"], size=(N, 1)),
    "w": _RNG.uniform(0.5, 2.0, size=(N, 1)).astype(np.float32),
}
_SCORE = (FEATURES["price"][:, 0] - 1.0 + (FEATURES["size"][:, 0] - 25) / 10
          + (FEATURES["color"][:, 0] == "red") * 1.0
          + _RNG.normal(scale=0.3, size=N))
BINARY = (_SCORE > 0).astype(np.int64).reshape(N, 1)
TARGET = _SCORE.astype(np.float32).reshape(N, 1)


def columns(fc):
  """Numeric, bucketized, vocabulary (with OOV ids), hashed, crossed."""
  size = fc.bucketized_column(fc.numeric_column("size"),
                              boundaries=[20.0, 30.0])
  return [
      fc.numeric_column("price"),
      size,
      fc.categorical_column_with_vocabulary_list("color", COLORS),
      fc.categorical_column_with_hash_bucket("city", 4),
      fc.crossed_column([size, "city"], hash_bucket_size=6),
  ]


def input_fns(labels):
  """train (whole set, repeated) / eval / predict input_fns."""

  def make(features, targets, repeat):
    def input_fn():
      data = tf.data.Dataset.from_tensor_slices(
          (features, targets) if targets is not None else features)
      return data.repeat(repeat).batch(N)
    return input_fn

  head = {k: v[:6] for k, v in FEATURES.items()}
  return (make(FEATURES, labels, None), make(FEATURES, labels, 1),
          make(head, None, 1))


def config():
  return tf.estimator.RunConfig(tf_random_seed=7, save_checkpoints_steps=30,
                                save_summary_steps=10)
