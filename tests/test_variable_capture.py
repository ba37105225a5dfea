"""VariableCapture: TF1-style variables created once, also inside strategy.run.

The strategy test runs in a subprocess: logical CPUs must be configured
before TensorFlow initializes its devices.
"""

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_MIRRORED = """
import numpy as np
import estimator_compat as tfe
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from estimator_compat.engines.function.variables import VariableCapture
from tests import models

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
capture = VariableCapture()
x, y = models.data(64)
dataset = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16))
iterator = iter(dataset)

def replica_step(features, labels):
  spec = models.classifier_fn(features, labels, tfe.ModeKeys.TRAIN, {})
  with tf.control_dependencies([spec.train_op]):
    return tf.identity(spec.loss)

@tf.function
def step():
  with strategy.scope(), capture.scope(seed=1):
    tf.compat.v1.train.get_or_create_global_step()  # as the engine's prologue
    features, labels = next(iterator)
    return strategy.run(replica_step, (features, labels))

with strategy.scope():
  for _ in range(4):
    step()
variables = capture.saveable_by_name()
print("NAMES", sorted(variables))
print("TYPES", sorted({type(v).__name__ for v in variables.values()}))
print("STEP", int(variables["global_step"].numpy()))
kernel = variables["dense/kernel"]
print("SAME", all(np.allclose(kernel.values[0].numpy(), v.numpy())
                  for v in kernel.values))
"""


@pytest.mark.slow
def test_variables_inside_mirrored_strategy_run():
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  result = subprocess.run([sys.executable, "-c", textwrap.dedent(_MIRRORED)],
                          capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  lines = dict(line.split(" ", 1) for line in result.stdout.splitlines()
               if line.split(" ", 1)[0] in ("NAMES", "TYPES", "STEP", "SAME"))
  # Legacy names, created once (not once per replica or per trace).
  assert lines["NAMES"] == str(["dense/bias", "dense/kernel", "dense_1/bias",
                                "dense_1/kernel", "global_step"])
  assert lines["TYPES"] == str(["MirroredVariable"])
  assert lines["STEP"] == "4"  # global_step counts steps, not replica-steps
  assert lines["SAME"] == "True"  # replicas stay in sync


def test_recreating_a_different_model_on_retrace_is_refused():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from estimator_compat.engines.function.variables import VariableCapture  # pylint: disable=g-import-not-at-top
  capture = VariableCapture()
  widths = [3, 4]

  @tf.function
  def build():
    with capture.scope():
      tf.compat.v1.get_variable("w", [widths[0]])
      if widths[0] == 4:
        tf.compat.v1.get_variable("extra", [1])
    return tf.constant(0)

  build.get_concrete_function()
  assert [v.name for v in capture.variables] == ["w:0"]
  widths.pop(0)
  with pytest.raises(ValueError, match="did not create|other order|variables"
                     ):
    tf.function(build.python_function).get_concrete_function()
