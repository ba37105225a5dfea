"""google-research/bert's run_classifier, unchanged, with --use_tpu=False.

The BERT fine-tuning runner (`python -m bert.run_classifier` from the
bert-tensorflow 1.0.4 package, which the test extra installs) builds a `tf.contrib.tpu.TPUEstimator`; with `--use_tpu=False` it trained,
evaluated and predicted on CPU/GPU. Here it runs on a tiny vocabulary, BERT
config and CoLA-format data set (bert_data.py) and must leave what the real
TPUEstimator (TF 2.15) left: the same 124 variables and shapes, global step
and output_dir layout (tools/record_bert_golden.sh), an eval_results.txt for
the last step, and a probability pair per test row. Its shuffling, dropout
and initialization are unseeded, so the numbers themselves are not compared
(on this data both learn in some runs and not in others).
"""

import json
import math
import os
import subprocess
import sys

import pytest

from tests.legacy_programs import bert_data
from tests.legacy_programs import describe

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "legacy_programs")
pytestmark = pytest.mark.slow  # about 45 s per run on 2 CPUs


def _run(data_dir, output_dir, engine):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  if engine != "default":
    env["ESTIMATOR_COMPAT_ENGINE"] = engine
  return subprocess.run(
      [sys.executable, os.path.join(PROGRAMS, "run_tf1_unchanged.py"),
       "-m", "bert.run_classifier",
       *bert_data.run_classifier_args(str(data_dir)),
       f"--output_dir={output_dir}"],
      capture_output=True, text=True, env=env, timeout=400, check=False)


@pytest.mark.parametrize("engine", ["default", "graph"])
def test_run_classifier_trains_evaluates_and_predicts(engine, tmp_path):
  bert_data.write(str(tmp_path))
  output_dir = str(tmp_path / "out")
  done = _run(tmp_path, output_dir, engine)
  assert done.returncode == 0, done.stderr[-3000:]
  with open(os.path.join(PROGRAMS, "goldens", "bert_run_classifier.json")) as f:
    golden = json.load(f)
  assert describe.describe(output_dir, done.stdout) == golden
  with open(os.path.join(output_dir, "eval_results.txt")) as f:
    results = dict(line.strip().split(" = ") for line in f if line.strip())
  assert sorted(results) == ["eval_accuracy", "eval_loss", "global_step",
                             "loss"]
  assert int(results["global_step"]) == 32  # 64 rows / 8 x 4 epochs
  assert 0.0 <= float(results["eval_accuracy"]) <= 1.0
  assert math.isfinite(float(results["eval_loss"]))
  with open(os.path.join(output_dir, "test_results.tsv")) as f:
    rows = [[float(p) for p in line.split("\t")] for line in f]
  assert len(rows) == bert_data.ROWS["test"]
  for row in rows:
    assert len(row) == 2 and abs(sum(row) - 1.0) < 1e-5
