"""A TF1-mode program: eager execution disabled at the top, as ported code does.

Run as a script (eager execution cannot be turned back on in a process):
prints what train / evaluate / predict gave, as JSON, or the error of the
first call that failed. argv[1]: "default" or an engine name to choose;
argv[2] (optional): "mirrored" / "mirrored_v1" trains under a TF2 / TF1
MirroredStrategy on two CPUs (16 rows, 2 per replica), "eval_distribute"
also evaluates under one; "eval_distribute_only" sets only eval_distribute
(a OneDeviceStrategy) and trains without a strategy.
"""

import json
import sys
import tempfile

import numpy as np

import estimator_compat as tfe
import tensorflow as tf  # pylint: disable=g-bad-import-order

tf.compat.v1.disable_eager_execution()


def model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(
      features["x"], 3, kernel_initializer=tf.compat.v1.ones_initializer())
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions={"c": tf.argmax(logits, 1)})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(
      mode, loss=loss, train_op=train_op,
      eval_metric_ops={"acc": tf.compat.v1.metrics.accuracy(
          labels, tf.argmax(logits, 1))})


X = np.arange(24, dtype=np.float32).reshape(8, 3) / 10.
Y = np.array([0, 1, 2, 0, 1, 2, 0, 1])


def input_fn():
  return tf.compat.v1.data.Dataset.from_tensor_slices(
      ({"x": X}, Y)).batch(4).repeat(2)


def mirrored_input_fn():
  x = np.arange(48, dtype=np.float32).reshape(16, 3) / 10.
  y = np.array([0, 1, 2, 0, 1, 2, 0, 1] * 2)
  return tf.compat.v1.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(2)


def main(engine, strategy):
  kwargs = {"engine": None if engine == "default" else engine}
  train_input_fn = input_fn
  if strategy == "eval_distribute_only":
    kwargs["eval_distribute"] = tf.distribute.OneDeviceStrategy("/cpu:0")
  elif strategy != "none":
    devices = ["/cpu:0", "/cpu:1"]
    kwargs["train_distribute"] = (
        tf.compat.v1.distribute.MirroredStrategy(devices)
        if strategy == "mirrored_v1" else tf.distribute.MirroredStrategy(
            devices))
    if strategy == "eval_distribute":
      kwargs["eval_distribute"] = kwargs["train_distribute"]
    kwargs["session_config"] = tf.compat.v1.ConfigProto(
        device_count={"CPU": 2})
    train_input_fn = mirrored_input_fn
  est = tfe.Estimator(model_fn, tempfile.mkdtemp(),
                      config=tfe.RunConfig(**kwargs))
  try:
    est.train(train_input_fn)
    results = est.evaluate(train_input_fn)
  except ValueError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
    return
  predictions = est.predict(lambda: tf.compat.v1.data.Dataset.from_tensor_slices(
      {"x": X}).batch(4))
  print(json.dumps({
      "global_step": int(est.get_variable_value("global_step")),
      "eval": {k: float(v) for k, v in results.items()},
      "predict": [int(p["c"]) for p in predictions],
      "kernel": est.get_variable_value("dense/kernel").tolist()}))


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "none")
