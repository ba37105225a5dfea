"""Legacy model_fns under MirroredStrategy on 2 logical CPUs; prints JSON.

Run as a script by tests/test_mirrored.py: logical CPUs must be configured
before TensorFlow initializes its devices, so these cases cannot share the
test process. Each case trains for real and reports numbers; the test file
holds the assertions.
"""

import json
import os
import sys
import tempfile

import numpy as np

import estimator_compat as tfe
import tensorflow as tf

_CPU = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    _CPU, [tf.config.LogicalDeviceConfiguration()] * 2)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests import models  # noqa: E402  pylint: disable=g-import-not-at-top

DEVICES = ["/cpu:0", "/cpu:1"]
STEPS = 10


def _variables(estimator):
  return {name: estimator.get_variable_value(name)
          for name in estimator.get_variable_names()}


def _max_diff(a, b):
  if sorted(a) != sorted(b):
    return float("inf")
  return max(float(np.max(np.abs(np.asarray(a[k], np.float64) -
                                 np.asarray(b[k], np.float64)))) for k in a)


def _train(batch_size, steps=STEPS, model_dir=None, **config):
  model_dir = model_dir or tempfile.mkdtemp()
  estimator = models.estimator(model_dir, {}, save_summary_steps=1, **config)
  estimator.train(models.input_fn(batch_size=batch_size), steps=steps)
  return estimator


def main():
  out = {}
  single = _train(32)
  single_vars = _variables(single)
  single_eval = single.evaluate(models.input_fn(num_epochs=1))

  # One MirroredStrategy: its batches are per replica (2 x 16 = 32).
  strategy = tf.distribute.MirroredStrategy(DEVICES)
  mirrored = _train(16, train_distribute=strategy, eval_distribute=strategy)
  mirrored_vars = _variables(mirrored)
  out["names"] = sorted(mirrored_vars)
  out["single_names"] = sorted(single_vars)
  out["mirrored_vs_single"] = _max_diff(mirrored_vars, single_vars)
  out["global_step"] = int(mirrored_vars["global_step"])
  mirrored_eval = mirrored.evaluate(models.input_fn(num_epochs=1))
  out["eval"] = {k: float(v) for k, v in mirrored_eval.items()}
  out["single_eval"] = {k: float(v) for k, v in single_eval.items()}
  # 96 rows in batches of 20: the replicas get 3 and 2 batches.
  uneven = models.input_fn(num_epochs=1, batch_size=20)
  out["uneven_eval"] = {k: float(v) for k, v in mirrored.evaluate(
      uneven).items()}
  out["uneven_single_eval"] = {
      k: float(v) for k, v in models.estimator(
          mirrored.model_dir, {}).evaluate(uneven).items()}
  # The reported loss (summaries) is the loss of the whole global batch.
  losses = models.events(mirrored.model_dir).get("loss", [])
  single_losses = models.events(single.model_dir).get("loss", [])
  out["loss_curve_diff"] = max(
      abs(a[1] - b[1]) for a, b in zip(losses, single_losses)) if (
          len(losses) == len(single_losses) and losses) else float("inf")
  out["loss_points"] = len(losses)

  # A TF1 strategy object, as legacy code passes it.
  v1 = _train(16, train_distribute=tf.compat.v1.distribute.MirroredStrategy(
      DEVICES))
  out["v1_vs_single"] = _max_diff(_variables(v1), single_vars)

  # Many steps per call.
  looped = _train(16, train_distribute=tf.distribute.MirroredStrategy(DEVICES),
                  steps_per_loop=5)
  out["steps_per_loop_vs_single"] = _max_diff(_variables(looped), single_vars)

  # Half the steps mirrored, half on one device, in one model_dir.
  model_dir = tempfile.mkdtemp()
  _train(16, steps=STEPS // 2, model_dir=model_dir,
         train_distribute=tf.distribute.MirroredStrategy(DEVICES))
  resumed = _train(32, steps=STEPS // 2, model_dir=model_dir)
  # The reference also restarts its input_fn after 5 steps.
  reference_dir = tempfile.mkdtemp()
  _train(32, steps=STEPS // 2, model_dir=reference_dir)
  reference = _train(32, steps=STEPS // 2, model_dir=reference_dir)
  out["resume_vs_single"] = _max_diff(_variables(resumed),
                                      _variables(reference))
  out["resume_step"] = int(resumed.get_variable_value("global_step"))

  # input_fn(input_context) is called once per worker with the context.
  contexts = []

  def input_fn_with_context(input_context):
    contexts.append((input_context.num_input_pipelines,
                     input_context.num_replicas_in_sync))
    return models.input_fn(batch_size=16)()

  estimator = models.estimator(
      tempfile.mkdtemp(), {},
      train_distribute=tf.distribute.MirroredStrategy(DEVICES))
  estimator.train(input_fn_with_context, steps=2)
  out["input_contexts"] = contexts

  # Keras layers, batch norm and UPDATE_OPS (a golden program's model_fn).
  tfe.install()
  from tests.golden_programs import batch_norm  # pylint: disable=g-import-not-at-top
  estimator = tfe.Estimator(
      batch_norm.model_fn, model_dir=tempfile.mkdtemp(),
      params=batch_norm.PARAMS,
      config=tfe.RunConfig(train_distribute=tf.distribute.MirroredStrategy(
          DEVICES), **batch_norm.CONFIG))
  estimator.train(batch_norm.train_input_fn, steps=STEPS)
  moving = estimator.get_variable_value(
      "batch_normalization/moving_mean")
  out["batch_norm_step"] = int(estimator.get_variable_value("global_step"))
  out["batch_norm_moving_mean_moved"] = bool(np.any(moving != 0.0))
  out["batch_norm_names"] = sorted(estimator.get_variable_names())
  print("RESULTS " + json.dumps(out))


if __name__ == "__main__":
  main()
