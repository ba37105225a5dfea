"""The default-config MLP program: real Estimator, ours, hand-written TF2.

The unchanged legacy program of benchmarks/mlp_model.py (784-128-10, batch
256, v1 Adam) at the DEFAULT RunConfig (summaries, step logging and the loss
LoggingTensorHook every 100 steps, checkpoints every 600 s and at the end),
2000 training steps per timed train() call, in one interleaved run: each
round times, one after the other,

- the real Estimator (TF 2.15, when --real_estimator_python is given or the
  reference venv exists), in a subprocess that times inside itself;
- this project at the default RunConfig (steps_per_loop=None: automatic);
- this project at steps_per_loop=1 (one step per call) and at
  steps_per_loop=50 (training only);
- hand-written TF2 loops running all the steps inside one tf.function, with
  Keras Adam and with the program's own v1 Adam (the ceiling for this
  program on a machine: no per-call cost, no hooks, no checkpoints), and a
  hand-written evaluation loop (all batches in one call).

It prints the median steps/s of each over the rounds, the ratios, evaluation
steps/s and prediction batches/s (whole batches: yield_single_examples=False)
of the real Estimator and ours, and checks that training at the default and at
steps_per_loop=1 and 50 (same seed) gives bitwise-equal variables and the
same checkpoint files. Training's ratios to the v1-Adam ceiling are also
printed round by round (each round's own ratio, and their median).

  python benchmarks/default_config.py [--quick] [--rounds 3] [--steps 2000]
      [--real_estimator_python ~/.cache/estimator-compat/tf215-venv/bin/python]

Timings taken on a busy machine are not worth reporting.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import charts  # pylint: disable=g-import-not-at-top,wrong-import-position
import estimator_compat as tfe  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_eval_steps_per_second  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_predict_batches_per_second  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_steps_per_second  # pylint: disable=g-import-not-at-top,wrong-import-position
from real_estimator import predict_batches_per_second  # pylint: disable=g-import-not-at-top,wrong-import-position
from real_estimator import REFERENCE_PYTHON, reference_env, reference_python  # pylint: disable=g-import-not-at-top,wrong-import-position
from mlp_model import input_fn, model_fn  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

REAL = "real Estimator (TF 2.15), default RunConfig"
OURS = "estimator_compat, default RunConfig"
ONE = "estimator_compat, steps_per_loop=1"
FIFTY = "estimator_compat, steps_per_loop=50"
HAND = "hand-written TF2 (Keras Adam), all steps in one tf.function"
HAND_V1 = "hand-written TF2 (v1 Adam), all steps in one tf.function"
HAND_EVAL = "hand-written TF2, all batches in one tf.function"
HAND_PREDICT = "hand-written TF2 prediction, all batches in one tf.function"


def ours(steps: int, eval_steps: int, steps_per_loop: Optional[int],
         model_dir: Optional[str] = None, seed: Optional[int] = None
        ) -> Dict[str, float]:
  """Train (and evaluate) steps/s of one run at the default RunConfig."""
  config = tfe.RunConfig(model_dir=model_dir or tempfile.mkdtemp(),
                         steps_per_loop=steps_per_loop, tf_random_seed=seed)
  estimator = tfe.Estimator(model_fn, config=config)
  estimator.train(input_fn, steps=10)  # warm-up
  start = time.perf_counter()
  estimator.train(input_fn, steps=steps)
  rates = {"train": steps / (time.perf_counter() - start)}
  if eval_steps:
    estimator.evaluate(input_fn, steps=10)  # warm-up
    start = time.perf_counter()
    estimator.evaluate(input_fn, steps=eval_steps)
    rates["eval"] = eval_steps / (time.perf_counter() - start)
    rates["predict"] = predict_batches_per_second(estimator, eval_steps)
  return rates


def real(python: str, steps: int, eval_steps: int) -> Dict[str, float]:
  script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "real_estimator.py")
  out = subprocess.run(
      [python, script, str(steps), str(eval_steps), "default_config"],
      capture_output=True, text=True, check=True, env=reference_env())
  train_rate, eval_rate, predict_rate = (
      float(r) for r in out.stdout.split()[-3:])
  return {"train": train_rate, "eval": eval_rate, "predict": predict_rate}


def same_model(steps: int) -> List[str]:
  """Differences of steps_per_loop=1 and 50 runs from the default's."""
  dirs = {}
  for spl in (None, 1, 50):
    dirs[spl] = tempfile.mkdtemp()
    ours(steps, 0, spl, model_dir=dirs[spl], seed=42)
  problems = []
  files = {spl: sorted(f for f in os.listdir(d) if f.startswith("model.ckpt"))
           for spl, d in dirs.items()}
  readers = {spl: tf.train.load_checkpoint(d) for spl, d in dirs.items()}
  names = readers[None].get_variable_to_shape_map()
  for spl in (1, 50):
    if files[None] != files[spl]:
      problems.append(f"checkpoint files differ at steps_per_loop={spl}: "
                      f"{files[None]} vs {files[spl]}")
    if set(names) != set(readers[spl].get_variable_to_shape_map()):
      problems.append(f"variable names differ at steps_per_loop={spl}")
      continue
    for name in sorted(names):
      if not np.array_equal(readers[None].get_tensor(name),
                            readers[spl].get_tensor(name)):
        problems.append(f"{name} differs at steps_per_loop={spl}")
  return problems


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=2000)
  parser.add_argument("--eval_steps", type=int, default=500)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--quick", action="store_true",
                      help="200 steps, 50 eval steps, 1 round: checks that "
                      "it runs, no timing worth reading")
  parser.add_argument("--real_estimator_python", default=None,
                      help="python of a TF 2.15 + tensorflow-estimator venv "
                      f"(default: {REFERENCE_PYTHON} when it exists)")
  parser.add_argument("--png", default=None,
                      help="also draw the three tables as bars here (needs "
                      "matplotlib: pip install -e .[bench])")
  args = parser.parse_args()
  if args.quick:
    args.steps, args.eval_steps, args.rounds = 200, 50, 1
  python = reference_python(args.real_estimator_python)

  train: Dict[str, List[float]] = {}
  evaluate: Dict[str, List[float]] = {}
  predict: Dict[str, List[float]] = {}
  for _ in range(args.rounds):  # Interleaved: each round times every case.
    if python:
      rates = real(python, args.steps, args.eval_steps)
      train.setdefault(REAL, []).append(rates["train"])
      evaluate.setdefault(REAL, []).append(rates["eval"])
      predict.setdefault(REAL, []).append(rates["predict"])
    for name, spl, eval_steps in ((OURS, None, args.eval_steps),
                                  (ONE, 1, args.eval_steps),
                                  (FIFTY, 50, 0)):
      rates = ours(args.steps, eval_steps, spl)
      train.setdefault(name, []).append(rates["train"])
      if "eval" in rates:
        evaluate.setdefault(name, []).append(rates["eval"])
        predict.setdefault(name, []).append(rates["predict"])
    train.setdefault(HAND, []).append(
        handwritten_steps_per_second(args.steps, args.steps))
    train.setdefault(HAND_V1, []).append(
        handwritten_steps_per_second(args.steps, args.steps, "v1"))
    if args.eval_steps:
      evaluate.setdefault(HAND_EVAL, []).append(
          handwritten_eval_steps_per_second(args.eval_steps))
      predict.setdefault(HAND_PREDICT, []).append(
          handwritten_predict_batches_per_second(args.eval_steps))

  def table(title, results):
    medians = {name: statistics.median(runs) for name, runs in results.items()}
    print(f"\n| {title} | steps/s (median) | runs |")
    print("|---|---|---|")
    for name, runs in results.items():
      print(f"| {name} | {medians[name]:.0f} | "
            f"{', '.join(f'{r:.0f}' for r in runs)} |")
    return medians

  print(f"MLP 784-128-10, batch 256, {args.steps} training steps per timed "
        f"train() call, {args.eval_steps} evaluation steps, {args.rounds} "
        "interleaved round(s)")
  train_medians = table("training", train)
  eval_medians = table("evaluation", evaluate)
  predict_medians = table("prediction (batches/s, whole batches)", predict)
  print()
  for a, b in ((OURS, REAL), (ONE, REAL), (FIFTY, REAL), (OURS, ONE),
               (OURS, HAND), (OURS, HAND_V1), (FIFTY, HAND_V1), (HAND, REAL),
               (HAND_V1, REAL)):
    if a in train_medians and b in train_medians:
      print(f"- training: {a} / {b}: {train_medians[a] / train_medians[b]:.2f}")
  for a in (OURS, FIFTY):
    per_round = [x / y for x, y in zip(train[a], train[HAND_V1])]
    print(f"- training, round by round: {a} / {HAND_V1}: "
          f"{', '.join(f'{r:.2f}' for r in per_round)} "
          f"(median {statistics.median(per_round):.2f})")
  for a, b in ((OURS, REAL), (ONE, REAL), (OURS, HAND_EVAL),
               (HAND_EVAL, REAL)):
    if a in eval_medians and b in eval_medians:
      print(f"- evaluation: {a} / {b}: {eval_medians[a] / eval_medians[b]:.2f}")
  for a, b in ((OURS, REAL), (ONE, REAL), (OURS, HAND_PREDICT),
               (HAND_PREDICT, REAL)):
    if a in predict_medians and b in predict_medians:
      print(f"- prediction: {a} / {b}: "
            f"{predict_medians[a] / predict_medians[b]:.2f}")

  charts.maybe(charts.bars, {
      f"{kind}: {name}": value
      for kind, medians in (("train", train_medians),
                            ("eval", eval_medians),
                            ("predict", predict_medians))
      for name, value in medians.items()}, path=args.png,
               title="MLP, default RunConfig: steps/s (batches/s) per path",
               ylabel="steps/s (prediction: batches/s)")
  problems = same_model(args.steps)
  print()
  if problems:
    print("FINAL MODELS DIFFER (default vs steps_per_loop=1 or 50): " +
          "; ".join(problems))
    return 1
  print("Final variables (bitwise) and checkpoint files: default == "
        "steps_per_loop=1 == steps_per_loop=50.")
  return 0


if __name__ == "__main__":
  sys.exit(main())
