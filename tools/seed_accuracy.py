r"""The seed program's training accuracy: one process vs a local PS cluster.

  python tools/seed_accuracy.py [--runs 3]

Runs the unchanged seed program (through tests/seed_runner.py, which seeds
numpy so every process draws the same data) --runs times in one process and
--runs times with --strategy=parameter_server --local_cluster=worker:2,ps:1,
then prints each run's accuracy on that data and the means (--local_cluster
repeats to compare other cluster shapes, e.g. worker:1,ps:1). The seed model
memorizes random labels without a seed, so single runs spread by a few
points; compare means, not single runs. Run by hand (minutes); not a test.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import estimator_compat as tfe  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position
from tests import seed_runner  # pylint: disable=g-import-not-at-top,wrong-import-position


def _seed_model_fn():
  """The seed program's model_fn, read from the program itself."""
  tfe.install()
  with open(seed_runner.SEED_PROGRAM, encoding="utf-8") as f:
    source = f.read().split("# 创建分布式策略")[0]
  namespace = {}
  exec(compile(source, seed_runner.SEED_PROGRAM, "exec"), namespace)  # pylint: disable=exec-used
  return namespace["model_fn"]


def accuracy(model_dir: str) -> float:
  model_fn = _seed_model_fn()

  def predict_fn(features, mode):
    labels = tf.zeros(tf.shape(features["feature"])[:1], tf.int64)
    spec = model_fn(features, labels, mode)
    return tfe.EstimatorSpec(mode, predictions=spec.predictions)

  x, y = seed_runner.data()
  estimator = tfe.Estimator(predict_fn, model_dir=model_dir)
  logits = np.array(list(estimator.predict(tfe.inputs.numpy_input_fn(
      {"feature": x}, shuffle=False))))
  return float((logits.argmax(axis=1) == y).mean())


def run(flags) -> str:
  workdir = tempfile.mkdtemp(prefix="seed_accuracy_")
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("TF_CONFIG", None)
  subprocess.run([sys.executable, os.path.join(ROOT, "tests",
                                               "seed_runner.py")] + flags,
                 cwd=workdir, env=env, check=True, capture_output=True,
                 timeout=900)
  return os.path.join(workdir, "model_dir")


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--runs", type=int, default=3)
  parser.add_argument("--local_cluster", action="append",
                      help="clusters to compare with one process (repeat; "
                      "default worker:2,ps:1)")
  args = parser.parse_args()
  # estimator_compat.install() reads --local_cluster from sys.argv; these
  # flags are this tool's only.
  sys.argv[1:] = []
  clusters = args.local_cluster or ["worker:2,ps:1"]
  results = {"single process": []}
  for cluster in clusters:
    results[f"PS {cluster}"] = []
  for _ in range(args.runs):
    results["single process"].append(accuracy(run([])))
    for cluster in clusters:
      results[f"PS {cluster}"].append(accuracy(run([
          "--strategy=parameter_server", f"--local_cluster={cluster}"])))
  single = statistics.mean(results["single process"])
  for name, values in results.items():
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    print(f"{name}: runs {[round(v, 3) for v in values]}, mean "
          f"{statistics.mean(values):.3f} (sd {spread:.3f})")
    if name != "single process":
      print(f"  difference of means vs single process: "
            f"{100 * (statistics.mean(values) - single):+.1f} points")
  return 0


if __name__ == "__main__":
  sys.exit(main())
