"""Small calls against the real Estimator: per-call latency (issue 26).

The benchmark program (benchmarks/mlp_model.py: 784-128-10 MLP, batch 256,
v1 Adam) at the default RunConfig, a fresh model_dir per process. One
process per side, the same code in both:

- the real Estimator: this file run by TF 2.15's python (the reference venv,
  `~/.cache/estimator-compat/tf215-venv/bin/python`, or
  --real_estimator_python);
- ours: this file run by this python, after `estimator_compat.install()`.

Each process trains 5 steps (warm-up), then makes --calls rounds of, in
turn, train(steps=1), evaluate(steps=1), and predict() reading 1 and 4 whole
batches (yield_single_examples=False, the generator consumed), timing each
call in wall seconds and in CPU seconds of the process (all its threads).
Each call starts from a collected heap (gc.collect() before it, untimed).
A process reports, per call kind, the median of its calls after the first
(the first call of a kind traces what later calls reuse). The sides'
processes alternate (Estimator, ours, Estimator, ours, ... --rounds times),
so that load on the machine hits both alike; the table gives the median
over the rounds and, per call kind, ours / Estimator against issue 26's
target: a predict() of 1-4 batches no slower than the Estimator's (<= 1.0),
train(steps=1) and evaluate(steps=1) at most 0.8 of its time.

With --input constant, both sides read one small constant batch repeated
instead of the benchmark's input_fn, whose 12.8 MB of numpy data are a
graph constant that the real Estimator writes to graph.pbtxt, as text, on
every train() call (about 0.65 s of its 1.05 s train(steps=1) here; ours
writes the traced step graph, docs/decisions.md).

  python benchmarks/small_calls.py [--rounds 3] [--calls 7] [--cpu]
      [--sides real,ours] [--input mlp|constant]
      [--real_estimator_python PYTHON] [--png PATH] [--quick]

A script, not a timed test; timings taken on a busy machine are worth only
their same-run ratios.
"""

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = "train(steps=1)"
EVALUATE = "evaluate(steps=1)"
PREDICT_1 = "predict(), 1 batch"
PREDICT_4 = "predict(), 4 batches"
# Issue 26's done-when: ours / Estimator at most this, per call kind.
TARGETS = {TRAIN: 0.8, EVALUATE: 0.8, PREDICT_1: 1.0, PREDICT_4: 1.0}
SIDES = {"real": "real Estimator (TF 2.15)", "ours": "estimator_compat"}
CLOCKS = {"wall": "wall seconds", "cpu": "CPU seconds of the process"}
_RESULT = "SMALL_CALLS_RESULT "
# Times per clock ("wall", "cpu"), then per call kind: one value per call.
Times = Dict[str, Dict[str, List[float]]]


def constant_input_fn() -> Any:
  """The benchmark's batch shapes from a small graph (--input constant).

  The benchmark's input_fn embeds 12.8 MB of numpy arrays in its graph, and
  the real Estimator writes that graph, as text, to graph.pbtxt on every
  train() call (30 MB here); this input, one constant batch repeated, has
  neither, as a program that reads files would not.
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  features = {"x": tf.fill([256, 784], 0.5)}
  labels = tf.range(256, dtype=tf.int64) % 10
  return tf.data.Dataset.from_tensors((features, labels)).repeat()


def measure(calls: int, data: str = "mlp") -> Times:
  """One side's calls, in this process (its tf.estimator is the side's).

  `data`: "mlp" for the benchmark's input_fn, "constant" for
  constant_input_fn.
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  sys.path.insert(0, HERE)
  from mlp_model import model_fn  # pylint: disable=g-import-not-at-top
  if data == "constant":
    input_fn = constant_input_fn
  else:
    from mlp_model import input_fn  # pylint: disable=g-import-not-at-top

  def batches(n: int) -> Callable[[], "tf.data.Dataset"]:
    return lambda: input_fn().take(n)

  times: Times = {clock: {kind: [] for kind in TARGETS} for clock in CLOCKS}
  with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as model_dir:
    estimator = tf.estimator.Estimator(
        model_fn, config=tf.estimator.RunConfig(model_dir=model_dir))
    estimator.train(input_fn, steps=5)  # warm-up

    def predict(n: int) -> None:
      for _ in estimator.predict(batches(n), yield_single_examples=False):
        pass

    cases = {
        TRAIN: lambda: estimator.train(input_fn, steps=1),
        EVALUATE: lambda: estimator.evaluate(input_fn, steps=1),
        PREDICT_1: lambda: predict(1),
        PREDICT_4: lambda: predict(4),
    }
    for _ in range(calls):
      for kind, call in cases.items():
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        times["cpu"][kind].append(time.process_time() - cpu)
        times["wall"][kind].append(time.perf_counter() - wall)
  return times


def _worker(side: str, calls: int, data: str) -> int:
  if side == "ours":
    sys.path.insert(0, os.path.dirname(HERE))
    import estimator_compat  # pylint: disable=g-import-not-at-top
    estimator_compat.install()  # mlp_model uses tf.estimator
  print(_RESULT + json.dumps(measure(calls, data)), flush=True)
  return 0


def run_side(side: str, python: str, calls: int, data: str = "mlp"
            ) -> Times:
  """One process of `side` on `python`: its calls' times."""
  if side == "real":
    from real_estimator import reference_env  # pylint: disable=g-import-not-at-top
    env = reference_env()
  else:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  done = subprocess.run(
      [python, os.path.abspath(__file__), "--worker", side,
       "--calls", str(calls), "--input", data], capture_output=True, text=True, env=env,
      check=False)
  results = [line for line in done.stdout.splitlines()
             if line.startswith(_RESULT)]
  if done.returncode or not results:
    raise RuntimeError(f"the {side} process failed ({done.returncode}):\n"
                       + done.stdout[-3000:] + done.stderr[-3000:])
  return json.loads(results[-1][len(_RESULT):])


def later_medians(times: Times) -> Dict[str, Dict[str, float]]:
  """Per clock and call kind, the median of the calls after the first."""
  return {clock: {kind: statistics.median(values[1:] or values)
                  for kind, values in kinds.items()}
          for clock, kinds in times.items()}


def verdict(ratio: Optional[float], kind: str) -> str:
  """PASS or FAIL against the kind's target; "-" without a ratio."""
  if ratio is None:
    return "-"
  return "PASS" if ratio <= TARGETS[kind] else "FAIL"


def table(rounds: Dict[str, List[Dict[str, Dict[str, float]]]],
          clock: str) -> List[str]:
  """The Markdown table of one clock: per call kind, each side's median over
  the rounds, ours / Estimator, the target and PASS/FAIL; then each
  round's values."""
  lines = [f"| call ({CLOCKS[clock]}, median) | real Estimator | ours | "
           "ours / Estimator | target | |", "|---|---:|---:|---:|---|---|"]
  medians: Dict[str, Dict[str, float]] = {
      side: {kind: statistics.median(r[clock][kind] for r in runs)
             for kind in TARGETS}
      for side, runs in rounds.items() if runs}
  for kind, target in TARGETS.items():
    real = medians.get("real", {}).get(kind)
    ours = medians.get("ours", {}).get(kind)
    ratio = ours / real if real and ours is not None else None
    lines.append(
        f"| {kind} | {_seconds(real)} | {_seconds(ours)} | "
        f"{'-' if ratio is None else f'{ratio:.2f}'} | <= {target:.1f} | "
        f"{verdict(ratio, kind)} |")
  lines += ["", f"Each round's medians ({CLOCKS[clock]}):", "",
            "| call | side | rounds |", "|---|---|---|"]
  for kind in TARGETS:
    for side, runs in rounds.items():
      lines.append(f"| {kind} | {SIDES[side]} | "
                   f"{', '.join(f'{r[clock][kind]:.3f}' for r in runs)} |")
  return lines


def _seconds(value: Optional[float]) -> str:
  return "-" if value is None else f"{value:.3f}"


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--rounds", type=int, default=3,
                      help="processes per side, alternated")
  parser.add_argument("--calls", type=int, default=7,
                      help="calls of each kind per process (the first is "
                      "left out of the medians)")
  parser.add_argument("--sides", default="real,ours",
                      help="comma-separated: real, ours (default both)")
  parser.add_argument("--cpu", action="store_true",
                      help="also a table in CPU seconds of each process "
                      "(steadier than wall time on a shared machine)")
  parser.add_argument("--real_estimator_python", default=None,
                      help="python of a TF 2.15 + tensorflow-estimator venv "
                      "(default: the reference venv when it exists)")
  parser.add_argument("--input", choices=("mlp", "constant"), default="mlp",
                      help="mlp: the benchmark's input_fn (its data a graph "
                      "constant); constant: one small constant batch "
                      "repeated (constant_input_fn)")
  parser.add_argument("--quick", action="store_true",
                      help="1 round of 2 calls per kind: checks that it "
                      "runs, no timing worth reading")
  parser.add_argument("--png", default=None,
                      help="also draw the medians as bars here (needs "
                      "matplotlib: pip install -e .[bench])")
  parser.add_argument("--worker", choices=sorted(SIDES),
                      help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.worker:
    return _worker(args.worker, args.calls, args.input)
  if args.quick:
    args.rounds, args.calls = 1, 2
  sides = [s.strip() for s in args.sides.split(",") if s.strip()]
  if not sides or set(sides) - set(SIDES):
    parser.error(f"--sides takes {', '.join(SIDES)}, got {args.sides!r}")
  sys.path.insert(0, HERE)
  pythons = {"ours": sys.executable}
  if "real" in sides:
    from real_estimator import reference_python  # pylint: disable=g-import-not-at-top
    python = reference_python(args.real_estimator_python)
    if python:
      pythons["real"] = python
    else:
      print("No TF 2.15 python (--real_estimator_python): ours only.")
  sides = [s for s in SIDES if s in sides and s in pythons]

  rounds: Dict[str, List[Dict[str, Dict[str, float]]]] = {s: [] for s in sides}
  loads = [os.getloadavg()[0]]
  for _ in range(args.rounds):
    for side in sides:
      rounds[side].append(later_medians(
          run_side(side, pythons[side], args.calls, args.input)))
      loads.append(os.getloadavg()[0])

  print(f"MLP 784-128-10, batch 256, default RunConfig, input {args.input}; "
        f"{args.rounds} "
        f"round(s) of one process per side, {args.calls} calls of each kind "
        f"per process, medians of the last {max(1, args.calls - 1)}; load "
        f"average (1 min) {min(loads):.1f}-{max(loads):.1f}\n")
  for clock in ("wall", "cpu") if args.cpu else ("wall",):
    print("\n".join(table(rounds, clock)) + "\n")
  import charts  # pylint: disable=g-import-not-at-top
  charts.maybe(charts.bars, {
      f"{kind}: {SIDES[side]}":
          1000 * statistics.median(r["wall"][kind] for r in runs)
      for kind in TARGETS for side, runs in rounds.items()}, path=args.png,
               title="Small calls, MLP at the default RunConfig (median)",
               ylabel="ms per call (wall)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
