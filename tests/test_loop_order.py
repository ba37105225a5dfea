"""Many steps per call give one step per call's results on many threads.

TensorFlow orders a loop's stateful ops within one iteration only; on a
machine with many cores the executor runs the next iteration's ops while
the previous one's still run, wherever nothing orders them. CI once saw
two prediction batches of one call swap their random draws: with 16
inter-op threads, every batched predict() of tests/many_threads_program.py
swapped some before the fix (prediction_batches.py chains the batches).
"""

import json
import os
import subprocess
import sys

import numpy as np


def test_each_mode_on_16_threads_gives_one_step_per_calls_results():
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  result = subprocess.run(
      [sys.executable, os.path.join(root, "tests", "many_threads_program.py")],
      capture_output=True, text=True, env=env, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  out = json.loads(result.stdout.strip().splitlines()[-1])
  assert out["most_steps_per_call"] > 50  # The loops did run many per call.
  batched, single = out["None"], out["1"]
  assert len(single["predictions"]) == 300
  for i, (got, want) in enumerate(zip(batched["predictions"],
                                      single["predictions"])):
    assert got == want, f"batch {i}"
  # No two batches drew the same noise: the stream went on.
  assert len({tuple(p) for p in single["predictions"]}) == 300
  assert batched["metrics"] == single["metrics"]
  assert sorted(batched["weights"]) == sorted(single["weights"])
  for name, want in single["weights"].items():
    np.testing.assert_array_equal(batched["weights"][name], want,
                                  err_msg=name)
