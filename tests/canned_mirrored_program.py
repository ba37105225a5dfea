"""A v2 DNNClassifier under MirroredStrategy (2 logical CPUs) vs one device
(no batch norm: its statistics are per replica, as in TensorFlow).

Run by tests/test_canned_dnn.py in its own process (logical devices must be
set before TensorFlow starts). Both runs resume the same 1-step checkpoint
and train 6 more steps on the same global batches; prints `RESULTS {json}`
with the largest relative weight difference and both checkpoints' names.
"""

import json
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf

import estimator_compat as tfe


def _input_fn(batch_size):
  def input_fn():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(96, 3)).astype(np.float32)
    y = (x.sum(axis=1) > 0).astype(np.int64)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(
        batch_size)
  return input_fn


def _estimator(model_dir, strategy=None):
  return tfe.DNNClassifier(
      hidden_units=[4], feature_columns=[
          tf.feature_column.numeric_column("x", shape=(3,))],
      model_dir=model_dir,
      optimizer=lambda: tf.keras.optimizers.legacy.Adagrad(0.1),
      config=tfe.RunConfig(tf_random_seed=1, train_distribute=strategy))


def main() -> int:
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  single = tempfile.mkdtemp()
  _estimator(single).train(_input_fn(32), steps=1)
  mirrored = tempfile.mkdtemp()
  shutil.rmtree(mirrored)
  shutil.copytree(single, mirrored)
  _estimator(single).train(_input_fn(32), steps=5)
  strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
  # The Estimator's input_fn gives each replica its batch: 2 x 16 = 32.
  _estimator(mirrored, strategy).train(_input_fn(16), steps=5)
  worst = 0.0
  # The single-device checkpoint has no per-replica slot copies: resuming
  # it under the strategy starts them from the first copy.
  for name, _ in tf.train.list_variables(single):
    a = tf.train.load_variable(single, name)
    b = tf.train.load_variable(mirrored, name)
    worst = max(worst, float(np.max(np.abs(a - b) / (np.abs(a) + 1e-6))))
  print("RESULTS " + json.dumps({
      "worst": worst,
      "names": sorted(n for n, _ in tf.train.list_variables(single)),
      "mirrored_names": sorted(
          n for n, _ in tf.train.list_variables(mirrored)),
      "step": int(tf.train.load_variable(mirrored, "global_step"))}))
  return 0


if __name__ == "__main__":
  sys.exit(main())
