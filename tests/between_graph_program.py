"""A legacy between-graph replication program, run once per TF_CONFIG task.

  python tests/between_graph_program.py MODEL_DIR MAX_STEPS

TF1 mode (eager execution disabled), a TF_CONFIG cluster with ps tasks and
no strategy, train_and_evaluate: the Estimator's chief/worker/ps roles with
its replica_device_setter. Each training task prints `DEVICES {...}` (its
graph's global variables and their devices) and the chief `RESULT {...}`.
With ESTIMATOR_COMPAT_REAL=1 it runs on the real tf.estimator (TF <= 2.15).
"""

import json
import os
import sys

import numpy as np

if os.environ.get("ESTIMATOR_COMPAT_REAL") != "1":
  import estimator_compat  # pylint: disable=g-import-not-at-top
  estimator_compat.install()
import tensorflow as tf  # pylint: disable=g-import-not-at-top,g-bad-import-order

tf.compat.v1.disable_eager_execution()

_RNG = np.random.RandomState(3)
X = _RNG.normal(size=(256, 4)).astype(np.float32)
Y = (X @ np.array([1., -2., .5, 3.], np.float32)).reshape(-1, 1)


def model_fn(features, labels, mode):
  predictions = tf.compat.v1.layers.dense(features, 1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_input_fn():
  return tf.compat.v1.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(
      16)


def eval_input_fn():
  return tf.compat.v1.data.Dataset.from_tensor_slices((X, Y)).batch(64)


class DevicesHook(tf.compat.v1.train.SessionRunHook):
  """Prints the training graph's global variables and their devices."""

  begun = False

  def begin(self):
    DevicesHook.begun = True
    print("DEVICES " + json.dumps(
        {v.op.name: v.device for v in tf.compat.v1.global_variables()}),
          flush=True)


def main(model_dir, max_steps):
  config = tf.estimator.RunConfig(
      model_dir=model_dir, save_checkpoints_steps=10,
      log_step_count_steps=10, experimental_max_worker_delay_secs=1)
  estimator = tf.estimator.Estimator(model_fn, config=config)
  result = tf.estimator.train_and_evaluate(
      estimator, tf.estimator.TrainSpec(train_input_fn, max_steps=max_steps,
                                        hooks=[DevicesHook()]),
      tf.estimator.EvalSpec(eval_input_fn, steps=None, start_delay_secs=0,
                            throttle_secs=1))
  if not DevicesHook.begun:
    # The chief reached max_steps before this task's delayed start: its
    # train() skipped, as the Estimator's did.
    print("SKIPPED_TRAINING", flush=True)
  if config.is_chief:
    print("RESULT " + json.dumps(
        {"global_step": int(estimator.get_variable_value("global_step")),
         "kernel": estimator.get_variable_value("dense/kernel").tolist()}),
          flush=True)
  del result


if __name__ == "__main__":
  main(sys.argv[1], int(sys.argv[2]))
