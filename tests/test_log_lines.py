"""The Estimator's log lines reach TensorFlow's logger, each exactly once.

A plain script that calls `tf.compat.v1.logging.set_verbosity(INFO)` runs in
a subprocess; the expected lines and counts are those the real Estimator
(TF 2.15) printed for the same script.
"""

import collections
import importlib
import logging
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorflow as tf
    import estimator_compat as est

    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    def input_fn():
      x = np.arange(8, dtype=np.float32).reshape(8, 1)
      return tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).batch(
          4).repeat()

    def model_fn(features, labels, mode):
      w = tf.compat.v1.get_variable(
          "w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
      pred = tf.matmul(features["x"], w)
      loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
      opt = tf.compat.v1.train.GradientDescentOptimizer(0.01)
      return est.EstimatorSpec(
          mode, loss=loss, predictions={"p": pred},
          train_op=opt.minimize(
              loss, global_step=tf.compat.v1.train.get_global_step()))

    config = est.RunConfig(log_step_count_steps=2, save_checkpoints_steps=3)
    e = est.Estimator(model_fn, model_dir=sys.argv[1], config=config)
    e.train(input_fn, max_steps=5)
    e.train(input_fn, max_steps=5)
    e.evaluate(input_fn, steps=2)
""")

# (pattern, times the real Estimator printed it for _SCRIPT).
_EXPECTED = [
    (r"Calling model_fn\.", 2),
    (r"Done calling model_fn\.", 2),
    (r"Create CheckpointSaverHook\.", 1),
    (r"Graph was finalized\.", 2),
    (r"Saving checkpoints for 0 into MODEL_DIR/model\.ckpt\.", 1),
    (r"Saving checkpoints for 3 into MODEL_DIR/model\.ckpt\.", 1),
    (r"Saving checkpoints for 5 into MODEL_DIR/model\.ckpt\.", 1),
    # On the graph engine (as on the real Estimator) the logged step is read
    # in the same Session.run as the train_op's increment, so it may be the
    # step after: a race in TF1 itself, seen under load.
    (r"loss = 14\.0, step = [01]", 1),
    (r"loss = [0-9.]+, step = [23] \([0-9.]+ sec\)", 1),
    (r"loss = [0-9.]+, step = [45] \([0-9.]+ sec\)", 1),
    (r"global_step/sec: [0-9.]+", 2),
    (r"Loss for final step: (?P<loss>[0-9.]+)\.", 1),
    (r"Skipping training since max_steps has already saved\.", 1),
    (r"Restoring parameters from MODEL_DIR/model\.ckpt-5", 1),
    (r"Starting evaluation at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", 1),
    (r"Evaluation \[1/2\]", 1),
    (r"Evaluation \[2/2\]", 1),
    (r"Inference Time : \d+\.\d{5}s", 1),
    (r"Finished evaluation at \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d", 1),
    (r"Saving dict for global step 5: global_step = 5, "
     r"loss = (?P<eval_loss>[0-9.]+)", 1),
]


# The losses the real Estimator logged for _SCRIPT (named groups above).
_LOSSES = {"loss": 0.19627573, "eval_loss": 0.84879476}


def test_plain_script_at_info_prints_each_line_once(engine, tmp_path):
  script = tmp_path / "plain.py"
  script.write_text(_SCRIPT)
  model_dir = tmp_path / "model"
  env = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="2",
             ESTIMATOR_COMPAT_ENGINE=engine)
  env.pop("TF_CONFIG", None)
  run = subprocess.run([sys.executable, str(script), str(model_dir)],
                       env=env, capture_output=True, text=True, timeout=240,
                       check=False)
  assert run.returncode == 0, run.stderr[-3000:]
  lines = [line[len("INFO:tensorflow:"):]
           for line in (run.stdout + run.stderr).splitlines()
           if line.startswith("INFO:tensorflow:")]
  counts = collections.Counter()
  values = {}
  for pattern, _ in _EXPECTED:
    regex = re.compile(pattern.replace("MODEL_DIR", re.escape(str(model_dir)))
                       + "$")
    for line in lines:
      match = regex.match(line)
      if match:
        counts[pattern] += 1
        values.update({k: float(v) for k, v in match.groupdict().items()})
  assert counts == {pattern: n for pattern, n in _EXPECTED}, "\n".join(lines)
  # The real Estimator's values; the last digits move with the CPU's kernels
  # (0.19627573 / 0.84879476 on one machine, 0.19627598 / 0.84879595 on
  # another, both on TF 2.15), so they match to float32 rounding.
  assert values == pytest.approx(_LOSSES, rel=1e-5)


@pytest.mark.parametrize("module", [
    "estimator_compat.estimator", "estimator_compat.training",
    "estimator_compat.engines.graph", "estimator_compat.engines.function.loops",
    "estimator_compat.engines.function.variable_saver",
    "estimator_compat.engines.function.ps_training",
    "estimator_compat.export.exporters", "estimator_compat.distribute.cluster_tasks",
    "estimator_compat.distribute.strategies", "estimator_compat.front.model_fn_call"])
def test_library_modules_do_not_log_through_absl(module):
  # absl.logging's first call adds a root handler (logging.basicConfig),
  # after which every "tensorflow" logger line is printed twice.
  with open(importlib.import_module(module).__file__) as f:
    assert "from absl import logging" not in f.read()


class _Lines(logging.Handler):

  def __init__(self):
    super().__init__()
    self.lines = []

  def emit(self, record):
    self.lines.append(record.getMessage())


def _progress_model_fn(features, labels, mode):
  del labels
  w = tf.compat.v1.get_variable("w", [1], initializer=tf.zeros_initializer())
  loss = tf.reduce_mean(features["x"] * w)
  return tfe.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())


@pytest.mark.parametrize("steps, expected", [
    # Until the input ends (7 batches): every batch, no total.
    (None, [f"Evaluation [{i}]" for i in range(1, 8)]),
    # From 20 steps on, every tenth of them (floor) and the last.
    (25, [f"Evaluation [{i}/25]" for i in range(2, 25, 2)]
     + ["Evaluation [25/25]"]),
])
def test_evaluation_progress_lines(engine, tmp_path, steps, expected):
  # The lines TF's evaluation loop printed for the Estimator, also when the
  # function engine runs many batches per call.
  rows = np.arange(14 if steps is None else 100, dtype=np.float32)

  def input_fn():
    data = tf.data.Dataset.from_tensor_slices(({"x": rows}, rows)).batch(2)
    return data if steps is None else data.repeat()

  handler = _Lines()
  logger = logging.getLogger("tensorflow")
  logger.addHandler(handler)
  level = logger.level
  logger.setLevel(logging.INFO)
  try:
    tfe.Estimator(_progress_model_fn, model_dir=str(tmp_path)).evaluate(
        input_fn, steps=steps)
  finally:
    logger.removeHandler(handler)
    logger.setLevel(level)
  progress = [line for line in handler.lines
              if line.startswith("Evaluation [")]
  assert progress == expected
  starts = [i for i, line in enumerate(handler.lines)
            if line.startswith("Starting evaluation at ")]
  ends = [i for i, line in enumerate(handler.lines)
          if line.startswith("Finished evaluation at ")]
  assert len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]
