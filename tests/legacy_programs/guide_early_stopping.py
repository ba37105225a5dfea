"""Early stopping with an Estimator, as TensorFlow's "Migrate early stopping"
guide showed it in its TF1 part: an MNIST-shaped model_fn of v1 layers
trained with train_and_evaluate, and a hook from
`tf1.estimator.experimental.make_early_stopping_hook` whose should_stop_fn
limits the training time. The tfds download is replaced by synthetic
28x28 images (no network); the time limit is a flag (the guide: 20 s).

  python guide_early_stopping.py --model_dir=DIR [--max_train_seconds=20]
"""

import argparse
import time

import numpy as np
import tensorflow as tf
import tensorflow.compat.v1 as tf1

parser = argparse.ArgumentParser()
parser.add_argument("--model_dir", default=None)
parser.add_argument("--max_train_seconds", default=20, type=float)


def synthetic_mnist(rows, seed):
  """uint8 images whose class is the brightest of ten pixel bands."""
  rng = np.random.RandomState(seed)
  labels = rng.randint(0, 10, size=rows).astype(np.int64)
  images = rng.randint(0, 120, size=(rows, 28, 28)).astype(np.uint8)
  for row, label in enumerate(labels):
    images[row, 2 * label:2 * label + 2, :] += 120
  return images, labels


TRAIN = synthetic_mnist(4096, seed=0)
TEST = synthetic_mnist(512, seed=1)


def normalize_img(image, label):
  return tf.cast(image, tf.float32) / 255., label


def _input_fn():
  ds_train = tf.data.Dataset.from_tensor_slices(TRAIN).shuffle(4096)
  ds_train = ds_train.map(
      normalize_img, num_parallel_calls=tf.data.experimental.AUTOTUNE)
  ds_train = ds_train.batch(128)
  ds_train = ds_train.repeat(100)
  return ds_train


def _eval_input_fn():
  ds_test = tf.data.Dataset.from_tensor_slices(TEST)
  ds_test = ds_test.map(
      normalize_img, num_parallel_calls=tf.data.experimental.AUTOTUNE)
  ds_test = ds_test.batch(128)
  return ds_test


def _model_fn(features, labels, mode):
  flatten = tf1.layers.Flatten()(features)
  features = tf1.layers.Dense(128, "relu")(flatten)
  logits = tf1.layers.Dense(10)(features)
  loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  optimizer = tf1.train.AdagradOptimizer(0.005)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(args):
  estimator = tf1.estimator.Estimator(model_fn=_model_fn,
                                      model_dir=args.model_dir)
  start_time = time.time()

  def should_stop_fn():
    return time.time() - start_time > args.max_train_seconds

  early_stopping_hook = tf1.estimator.experimental.make_early_stopping_hook(
      estimator=estimator, should_stop_fn=should_stop_fn, run_every_secs=1,
      run_every_steps=None)
  train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn,
                                       hooks=[early_stopping_hook])
  eval_spec = tf1.estimator.EvalSpec(input_fn=_eval_input_fn)
  metrics, _ = tf1.estimator.train_and_evaluate(estimator, train_spec,
                                                eval_spec)
  print("final evaluation:", metrics)


if __name__ == "__main__":
  main(parser.parse_args())
