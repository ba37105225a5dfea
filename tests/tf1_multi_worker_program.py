"""A TF1-mode multi-worker program, as in the TF docs' multi-worker guide.

Eager execution disabled, MultiWorkerMirroredStrategy as train_distribute,
train_and_evaluate; run once per TF_CONFIG task. argv[1]: model_dir. Prints
the task's final global step, kernel and model_dir listing as JSON.
"""

import json
import os
import sys

import numpy as np

import estimator_compat as tfe
import tensorflow as tf  # pylint: disable=g-bad-import-order

tf.compat.v1.disable_eager_execution()


def model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(
      features["x"], 3, kernel_initializer=tf.compat.v1.ones_initializer())
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(input_context=None):
  x = np.arange(48, dtype=np.float32).reshape(16, 3) / 10.
  y = np.array([0, 1, 2, 0, 1, 2, 0, 1] * 2)
  dataset = tf.compat.v1.data.Dataset.from_tensor_slices(({"x": x}, y))
  if input_context is not None:
    dataset = dataset.shard(input_context.num_input_pipelines,
                            input_context.input_pipeline_id)
  return dataset.batch(2)


def main(model_dir):
  strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
  est = tfe.Estimator(model_fn, model_dir, config=tfe.RunConfig(
      train_distribute=strategy, save_checkpoints_steps=2))
  tfe.train_and_evaluate(est, tfe.TrainSpec(input_fn, max_steps=6),
                         tfe.EvalSpec(input_fn, steps=2))
  print(json.dumps({
      "global_step": int(est.get_variable_value("global_step")),
      "kernel": est.get_variable_value("dense/kernel").tolist(),
      "files": sorted(os.listdir(model_dir))}))


if __name__ == "__main__":
  main(sys.argv[1])
