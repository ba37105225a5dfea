"""Batch norm under MirroredStrategy on 2 logical CPUs; writes JSON results.

Runs on the real Estimator (`--side old`, TF 2.15 venv; recorded by
tools/record_mirrored_batch_norm.sh into
tests/goldens/mirrored_batch_norm.json) and here (`--side new`, by
tests/test_mirrored_batch_norm.py). Every variable starts from a constant
initializer, so both sides start from the same model.ckpt-0.

Each replica gets a whole batch from the input_fn and updates its own copy
of the moving statistics (sync-on-read variables); the checkpoint holds
their mean, which evaluation and prediction then use. Training runs as two
`train()` calls of one step each, so the second restores the statistics
into every copy.
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np

_X = np.array([[1., 0.5], [2., -1.], [3., 2.], [10., 0.],
               [5., 1.], [7., -3.], [0., 4.], [-4., 2.]], np.float32)
_Y = np.array([[1.], [0.], [2.], [3.], [1.], [0.], [2.], [1.]], np.float32)
_KERNEL = [[0.5, -0.25, 1.0], [0.75, 0.5, -0.5]]


def _model_fn(tf, kind):
  """A dense layer, batch norm (`kind`: v1 layers or Keras), a dense head."""

  def model_fn(features, labels, mode):
    training = mode == tf.estimator.ModeKeys.TRAIN
    net = tf.compat.v1.layers.dense(
        features["x"], 3, kernel_initializer=tf.compat.v1.constant_initializer(
            _KERNEL), name="hidden")
    if kind == "v1_layers":
      net = tf.compat.v1.layers.batch_normalization(net, training=training,
                                                    name="bn")
    else:
      net = tf.keras.layers.BatchNormalization(name="bn")(net,
                                                          training=training)
    out = tf.compat.v1.layers.dense(
        net, 1, kernel_initializer=tf.compat.v1.ones_initializer(),
        name="out")
    if mode == tf.estimator.ModeKeys.PREDICT:
      return tf.estimator.EstimatorSpec(mode, predictions={"y": out[:, 0]})
    loss = tf.compat.v1.losses.mean_squared_error(labels, out)
    train_op = None
    if training:
      with tf.control_dependencies(tf.compat.v1.get_collection(
          tf.compat.v1.GraphKeys.UPDATE_OPS)):
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

  return model_fn


def _run(tf, kind, strategy):
  """Trains 1 + 1 steps mirrored, then evaluates and predicts; the numbers."""

  def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(4)

  def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(8)

  def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": _X[:4]}).batch(4)

  estimator = tf.estimator.Estimator(
      _model_fn(tf, kind), model_dir=tempfile.mkdtemp(),
      config=tf.estimator.RunConfig(train_distribute=strategy,
                                    tf_random_seed=1))
  estimator.train(train_input_fn, steps=1)
  estimator.train(train_input_fn, steps=1)
  variables = {name: estimator.get_variable_value(name).tolist()
               for name in estimator.get_variable_names()}
  return {
      "variables": variables,
      "eval_loss": float(estimator.evaluate(eval_input_fn)["loss"]),
      "predictions": [float(p["y"]) for p in
                      estimator.predict(predict_input_fn)],
  }


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--side", choices=("old", "new"), required=True)
  parser.add_argument("--out", required=True)
  args = parser.parse_args()
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  if args.side == "new":
    sys.path.insert(0, os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    import estimator_compat  # pylint: disable=g-import-not-at-top
    estimator_compat.install()
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  strategy = tf.distribute.MirroredStrategy(
      ["/cpu:0", "/cpu:1"],
      cross_device_ops=tf.distribute.ReductionToOneDevice())
  results = {"tensorflow_version": tf.__version__}
  for kind in ("v1_layers", "keras"):
    results[kind] = _run(tf, kind, strategy)
  with open(args.out, "w") as f:
    json.dump(results, f, indent=1, sort_keys=True)


if __name__ == "__main__":
  main()
