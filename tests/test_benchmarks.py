"""The benchmark scripts run end to end and judge their targets as stated.

Runs benchmarks/ scripts, which BUILD's py_test data does not hold: pytest
runs this file (slow), not the Bazel pass.
"""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL_CALLS = os.path.join(ROOT, "benchmarks", "small_calls.py")
ROWS = {"train(steps=1)": "0.8", "evaluate(steps=1)": "0.8",
        "predict(), 1 batch": "1.0", "predict(), 4 batches": "1.0"}


def _small_calls():
  spec = importlib.util.spec_from_file_location("small_calls", SMALL_CALLS)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


@pytest.mark.parametrize("data", ["mlp", "constant"])
def test_small_calls_quick_run_of_ours_prints_every_row(data):
  done = subprocess.run(
      [sys.executable, SMALL_CALLS, "--quick", "--sides", "ours", "--cpu",
       "--input", data],
      capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
      env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3"))
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  assert f"default RunConfig, input {data};" in done.stdout
  for clock in ("wall seconds", "CPU seconds of the process"):
    assert f"| call ({clock}, median) |" in done.stdout
  for kind, target in ROWS.items():
    # Per clock: no Estimator side, so no ratio and no verdict; our
    # seconds are a positive number.
    rows = re.findall(
        rf"^\| {re.escape(kind)} \| - \| ([0-9.]+) \| - \| <= {target} \| - \|$",
        done.stdout, re.MULTILINE)
    assert len(rows) == 2, done.stdout
    assert all(float(seconds) > 0 for seconds in rows)


def test_small_calls_table_judges_each_target():
  module = _small_calls()

  def side(train, evaluate, predict_1, predict_4):
    values = dict(zip(ROWS, (train, evaluate, predict_1, predict_4)))
    return {"wall": values}

  rounds = {
      "real": [side(1.0, 0.5, 0.2, 0.2), side(3.0, 0.5, 0.2, 0.2),
               side(1.0, 0.5, 0.2, 0.2)],
      # train at exactly 0.8 of the Estimator's median (1.0), evaluate at
      # 0.82, a predict() as fast, the other slower.
      "ours": [side(0.8, 0.41, 0.2, 0.21)] * 3,
  }
  lines = module.table(rounds, "wall")
  rows = {line.split(" | ")[0][2:]: line for line in lines[2:6]}
  assert rows["train(steps=1)"] == (
      "| train(steps=1) | 1.000 | 0.800 | 0.80 | <= 0.8 | PASS |")
  assert rows["evaluate(steps=1)"].endswith("| 0.82 | <= 0.8 | FAIL |")
  assert rows["predict(), 1 batch"].endswith("| 1.00 | <= 1.0 | PASS |")
  assert rows["predict(), 4 batches"].endswith("| 1.05 | <= 1.0 | FAIL |")
  assert ("| train(steps=1) | real Estimator (TF 2.15) | 1.000, 3.000, "
          "1.000 |") in lines


def test_small_calls_medians_leave_out_each_first_call():
  module = _small_calls()
  times = {"wall": {"train(steps=1)": [9.0, 1.0, 3.0, 2.0]},
           "cpu": {"train(steps=1)": [5.0]}}
  assert module.later_medians(times) == {"wall": {"train(steps=1)": 2.0},
                                         "cpu": {"train(steps=1)": 5.0}}
