"""Records the BoostedTrees tutorial program on tensorflow-estimator 2.8.

  python tools/record_boosted_trees_tutorial.py [--runs 20]

Run with the TF 2.8 venv's Python (tools/record_boosted_trees_goldens.sh
does, after the other BoostedTrees goldens). The tutorial shuffles its
input unseeded, as written, so its trees differ a little from run to run on
2.8 itself: this runs it `--runs` times (20: six runs spanned only about
half of the trees' loss spread, see the test) and keeps every run's printed
results (tests/test_boosted_trees_tutorial.py holds ours to their spread)
and the variables (names and shapes) its last model_dir holds, in
tests/legacy_programs/goldens/boosted_trees_tutorial.json.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "tests", "legacy_programs",
                       "boosted_trees_tutorial.py")
OUT = os.path.join(ROOT, "tests", "legacy_programs", "goldens",
                   "boosted_trees_tutorial.json")


def printed_results(stdout: str) -> dict:
  """The program's last line `results: {json}`."""
  for line in reversed(stdout.splitlines()):
    if line.startswith("results: "):
      return json.loads(line[len("results: "):])
  raise ValueError("the program printed no results line")


def main() -> None:
  parser = argparse.ArgumentParser()
  parser.add_argument("--runs", type=int, default=20)
  args = parser.parse_args()
  runs, variables = [], None
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  for _ in range(args.runs):
    model_dir = tempfile.mkdtemp()
    done = subprocess.run([sys.executable, PROGRAM, f"--model_dir={model_dir}"],
                          capture_output=True, text=True, env=env, check=True)
    runs.append(printed_results(done.stdout))
    variables = {name: shape
                 for name, shape in tf.train.list_variables(model_dir)}
  with open(OUT, "w") as f:
    json.dump({"reference": f"tensorflow-estimator 2.8.0 on TF {tf.__version__}",
               "runs": runs, "variables": variables}, f, indent=1,
              sort_keys=True)
    f.write("\n")
  print(f"recorded {len(runs)} runs in {OUT}")


if __name__ == "__main__":
  main()
