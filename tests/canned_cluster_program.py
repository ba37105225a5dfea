"""A v2 DNNClassifier with an embedding, as a user runs it on each task.

  python tests/canned_cluster_program.py MODEL_DIR MAX_STEPS [flags]

Run by tests/test_dnn_cluster.py on a local parameter-server cluster with
min_shard_bytes small enough to shard the embedding and the hidden layer.
The chief prints `RESULT {...}` with its final evaluation.
"""

import json
import sys

import numpy as np

import estimator_compat
import tensorflow as tf

estimator_compat.install()

_RNG = np.random.RandomState(3)
IDS = _RNG.randint(0, 50, size=800).astype(np.int64)
X = _RNG.normal(size=(800, 2)).astype(np.float32)
Y = ((IDS % 2 == 0) ^ (X[:, 0] > 0)).astype(np.int64)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(
      ({"id": IDS, "x": X}, Y)).repeat().batch(50)


def _eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(({"id": IDS, "x": X}, Y)).batch(
      200)


def main(model_dir, max_steps):
  fc = tf.feature_column
  columns = [fc.numeric_column("x", shape=(2,)), fc.embedding_column(
      fc.categorical_column_with_identity("id", 50), 8)]
  estimator = tf.estimator.DNNClassifier(
      hidden_units=[16], feature_columns=columns,
      optimizer=lambda: tf.keras.optimizers.legacy.Adagrad(0.1),
      config=tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1,
                                    save_checkpoints_steps=50))
  result, _ = tf.estimator.train_and_evaluate(
      estimator, tf.estimator.TrainSpec(_input_fn, max_steps=max_steps),
      tf.estimator.EvalSpec(_eval_input_fn, start_delay_secs=0,
                            throttle_secs=1))
  if result is not None:
    print("RESULT " + json.dumps({k: float(v) for k, v in result.items()}),
          flush=True)


if __name__ == "__main__":
  main(sys.argv[1], int(sys.argv[2]))
