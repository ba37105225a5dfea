"""A TF1-mode program: eager execution disabled at the top, as ported code does.

Run as a script (eager execution cannot be turned back on in a process):
prints what train / evaluate / predict gave, as JSON, or the error of the
first call that failed. argv[1]: "default" or an engine name to choose.
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


def main(engine):
  config = tfe.RunConfig(engine=None if engine == "default" else engine)
  est = tfe.Estimator(model_fn, tempfile.mkdtemp(), config=config)
  try:
    est.train(input_fn)
  except ValueError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
    return
  results = est.evaluate(input_fn)
  predictions = est.predict(lambda: tf.compat.v1.data.Dataset.from_tensor_slices(
      {"x": X}).batch(4))
  print(json.dumps({
      "global_step": int(est.get_variable_value("global_step")),
      "eval": {k: float(v) for k, v in results.items()},
      "predict": [int(p["c"]) for p in predictions],
      "kernel": est.get_variable_value("dense/kernel").tolist()}))


if __name__ == "__main__":
  main(sys.argv[1])
