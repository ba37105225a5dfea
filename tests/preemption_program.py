"""Trains the test classifier until a signal; the preemption tests send one.

Usage: python -m tests.preemption_program MODEL_DIR LOG MAX_STEPS [OPTION...]
Options: `own_handler` (a SIGTERM handler of the program's own, which logs
and exits 7), `off` (RunConfig(save_on_preemption=False)), `mirrored`
(MirroredStrategy), `slow` (each step sleeps 5 ms, so that a signal lands
at a random step).

Appends to LOG, one line each: `start STEP` when the session is ready
(with the variables it starts from in LOG.STEP.npz), `after_save STEP` and
`end STEP` from a saving listener, `user_handler` from the own handler, and
`finished STEP` when train() returned.
"""

import signal
import sys
import time

import numpy as np
import tensorflow as tf

import estimator_compat as tfe
from tests import models


def _log(path: str, line: str) -> None:
  with open(path, "a") as f:
    f.write(line + "\n")


class _Listener(tfe.CheckpointSaverListener):

  def __init__(self, path):
    self._path = path

  def after_save(self, session, global_step_value):
    _log(self._path, f"after_save {global_step_value}")

  def end(self, session, global_step_value):
    _log(self._path, f"end {global_step_value}")


class _StartHook(tfe.SessionRunHook):
  """Records the step and the variables a run starts from."""

  def __init__(self, path):
    self._path = path

  def begin(self):
    self._step = tf.compat.v1.train.get_global_step()
    self._variables = tf.compat.v1.trainable_variables()

  def after_create_session(self, session, coord):
    step, values = session.run([self._step, self._variables])
    np.savez(f"{self._path}.{step}.npz",
             **{v.name.split(":")[0].replace("/", "__"): value
                for v, value in zip(self._variables, values)})
    _log(self._path, f"start {step}")


def main(model_dir: str, log: str, max_steps: int, options) -> None:
  config = {}
  if "mirrored" in options:
    config["train_distribute"] = tf.distribute.MirroredStrategy(["/cpu:0"])
  if "off" in options:
    config["save_on_preemption"] = False
  if "own_handler" in options:
    def handler(signum, frame):
      del frame
      _log(log, f"user_handler {signum}")
      sys.exit(7)
    signal.signal(signal.SIGTERM, handler)
  est = models.estimator(model_dir, save_checkpoints_steps=10**6,
                         keep_checkpoint_max=3, log_step_count_steps=None,
                         save_summary_steps=None, **config)
  input_fn = models.input_fn()
  if "slow" in options:
    def input_fn():  # pylint: disable=function-redefined
      x, y = models.data()
      dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
      def pause(features, labels):
        x = tf.numpy_function(lambda a: (time.sleep(0.005), a)[1],
                              [features["x"]], tf.float32)
        x.set_shape(features["x"].shape)
        return {"x": x}, labels
      return dataset.repeat().batch(16).map(pause)
  est.train(input_fn, max_steps=max_steps, hooks=[_StartHook(log)],
            saving_listeners=[_Listener(log)])
  _log(log, f"finished {est.get_variable_value('global_step')}")


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:])
