"""Where a train(), evaluate() or predict() call's time goes, against TF2.

The benchmark MLP (benchmarks/mlp_model.py) at the default RunConfig. Each
round times, one after the other (interleaved, so a loaded machine slows
every case alike):

- our evaluate(steps=EVAL_STEPS), its time split by phase (below);
- a hand-written evaluation: the forward pass and a mean loss, all batches
  in one tf.function call (the ceiling: no per-call cost);
- our predict() over PREDICT_BATCHES whole batches
  (yield_single_examples=False), split the same way;
- a hand-written prediction loop: all batches in one tf.function, each
  batch's logits written out (the ceiling for prediction);
- our predict() of the same batches example by example
  (yield_single_examples=True) against the hand-written loop whose batches
  are then handed out as one dict per example (what any per-example
  generator does);
- hand-written WHOLE calls of both (benchmarks/engines.py): what any
  evaluation or prediction of this program must do per call, since the
  Estimator calls input_fn and model_fn on every call: call input_fn, make
  the variables and trace a fresh tf.function, restore the latest
  checkpoint, run the batches, read the results, let the iterator go (the
  ceiling of a whole call, fixed cost included);
- a small predict() call (SMALL_BATCHES batches) and a small
  evaluate(steps=1): the latency a per-request caller feels.

Phases of our calls (exclusive times: a phase's own time, not that of the
phases it calls):

- input_fn: calling input_fn and turning its result into the Dataset the
  steps read (engines/function/input_pipeline.py);
- model_fn trace: tracing model_fn into one graph (TracedModel());
- pruning: pruning that graph to each step function's fetches;
- restore: reading the checkpoint into the variables;
- first step: the first one-batch call (instantiating the pruned function
  in the runtime, then running it);
- single steps: the other one-batch calls, with their hooks;
- loop first call: the first many-batch call (tracing and instantiating the
  loop, then its batches); `loop trace` estimates the fixed part as the
  first call minus its batches at the steady rate of the later calls;
- loop: the later many-batch calls;
- metric read, release, eval events: reading the metric values, letting the
  call's functions go, writing the eval events file;
- other: the rest of the call (hooks, logging, the Python around them).

Each timed case starts from a collected heap (gc.collect() before it), so
that no case pays for collecting another's garbage (TensorFlow's function
graphs are reference cycles). It prints, per case, the median over the
rounds, the same-run ratios ours / hand-written of whole calls and of a
batch in the many-batch loop.

With `--train`, each round times instead our train(steps=TRAIN_STEPS) at
the default RunConfig (summaries, step counter and loss logging every 100
steps, a checkpoint at the call's start and end), split by phase, and the
hand-written v1-Adam ceiling (benchmarks/engines.py: all steps in one
tf.function, traced before the clock starts), and a hand-written WHOLE
training call (input_fn, the variables and a fresh tf.function traced,
the latest checkpoint restored, the steps, a checkpoint saved, the iterator
let go: what every train() call of this program must do), both ratios
printed. Phases of a train() call
(exclusive, as above):

- input_fn, model_fn trace, pruning, restore: as above;
- hooks begin: the hooks' begin() (inside the trace);
- saver build: making the Saver (the restore's and the writer's);
- graph_def copy: the checkpoint writer's copy of the traced graph;
- after_create_session: the hooks' after_create_session();
- graph.pbtxt: writing it (the checkpoint writer's begin);
- checkpoint saves: the Saver's save plus the `.meta` (model.ckpt-N);
- first call per fetch set: a step call (one step, or a loop of
  steps_per_loop) whose fetches this call had not run yet (instantiating
  its function, then the step);
- boundary steps: the other one-step calls, where hooks see a step;
- loop first call / loop: the automatic loop's calls (steps no hook sees);
  `loop trace` is the first call minus its steps at the later calls' rate;
- hooks before_run / after_run / end: the hooks (summaries and log lines);
- program input_fn / program model_fn: the program's own functions
  (`input_fn` and `model_fn trace` are then only ours), in every call;
- release: letting the call's input and functions go;
- other: the controller and the Python around it.

It also prints, per round, the contract's floor and the cap it puts on the
loop-only ratio: what no implementation of the Estimator's train() contract
skips (the program's input_fn and model_fn, called on every call; the
restore; the default hooks' own work; the call's two checkpoint saves), and
ceiling / (ceiling + floor), the best ours / hand-written (loop-only) any
such implementation could read in that round, in the clock's unit. Without
`--train` the same cap is printed for evaluate() and predict() (their floor:
the program's input_fn and model_fn and the restore; wall time only).

`--train_fresh` makes a new Estimator (model_dir) per round, so that each
timed call is its model's first (what a program that calls train() once
pays); else one Estimator trains on, as train_and_evaluate or a loop of
train() calls do. A script, not a timed test:

  python benchmarks/call_costs.py [--rounds 3] [--eval_steps 500]
      [--predict_batches 500] [--small_batches 4] [--quick]
  python benchmarks/call_costs.py --train [--train_steps 2000] [--cpu]
"""

import argparse
import collections
import gc
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import charts  # pylint: disable=g-import-not-at-top,wrong-import-position
import estimator_compat as tfe  # pylint: disable=g-import-not-at-top,wrong-import-position
from phase_clock import CALL_FLOOR_PHASES, FLOOR_PHASES, PHASES, TRAIN_PHASES  # pylint: disable=g-import-not-at-top,wrong-import-position
from phase_clock import PhaseClock, floor_seconds, install  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_checkpoint  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_eval_steps_per_second  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_eval_whole_call_seconds  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_predict_batches_per_second  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_predict_examples_per_second  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_predict_whole_call_seconds  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_steps_per_second  # pylint: disable=g-import-not-at-top,wrong-import-position
from engines import handwritten_train_whole_call_seconds  # pylint: disable=g-import-not-at-top,wrong-import-position
from mlp_model import input_fn, model_fn  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

def _batches(n: int, program_input_fn: Callable[[], Any] = input_fn
             ) -> Callable[[], tf.data.Dataset]:
  return lambda: program_input_fn().take(n)


def ours_evaluate(estimator: Any, clock: PhaseClock, steps: int,
                  program_input_fn: Callable[[], Any] = input_fn
                 ) -> Dict[str, float]:
  start = time.perf_counter()
  with clock.recording():
    estimator.evaluate(program_input_fn, steps=steps)
  return dict(clock.times, wall=time.perf_counter() - start)


def ours_predict(estimator: Any, clock: PhaseClock, batches: int,
                 program_input_fn: Callable[[], Any] = input_fn
                ) -> Dict[str, float]:
  start = time.perf_counter()
  with clock.recording():
    for _ in estimator.predict(_batches(batches, program_input_fn),
                               yield_single_examples=False):
      pass
  return dict(clock.times, wall=time.perf_counter() - start)


def ours_predict_examples_per_second(estimator: Any, batches: int) -> float:
  """predict() of `batches` batches, example by example
  (yield_single_examples=True, the generator consumed)."""
  start = time.perf_counter()
  examples = sum(1 for _ in estimator.predict(_batches(batches)))
  return examples / (time.perf_counter() - start)


def _fixed_and_per_step(clock: PhaseClock) -> Dict[str, float]:
  """One call's phases, `loop trace` and the per-batch microseconds."""
  times, batches = clock.times, clock.batches
  out = dict(times)
  later = times.get("loop", 0.0)
  if later:
    per_batch = later / max(1, batches["loop"])
    out["loop trace"] = max(0.0, times["loop first call"] -
                            per_batch * batches["loop first call"])
    out["per batch, loop (us)"] = per_batch * 1e6
  if batches.get("single steps"):
    out["per batch, single (us)"] = (
        times["single steps"] / batches["single steps"] * 1e6)
  return out


def _program(clock: PhaseClock) -> Tuple[Callable[..., Any],
                                         Callable[..., Any]]:
  """The program's input_fn and model_fn, each timed as a phase of its own."""
  timed_input_fn = clock.timed(lambda: "program input_fn", input_fn)
  timed_model_fn = clock.timed(lambda *unused: "program model_fn", model_fn)

  def program_input_fn():
    return timed_input_fn()

  def program_model_fn(features, labels, mode):
    return timed_model_fn(features, labels, mode)

  return program_input_fn, program_model_fn


def ours_train(estimator: Any, clock: PhaseClock, steps: int,
               program_input_fn: Callable[[], Any]) -> Dict[str, float]:
  """One timed train() call: its phases, wall and CPU seconds."""
  start, cpu = time.perf_counter(), time.process_time()
  clock.training = True
  try:
    with clock.recording():
      estimator.train(program_input_fn, steps=steps)
  finally:
    clock.training = False
  return dict(clock.times, wall=time.perf_counter() - start,
              cpu=time.process_time() - cpu)


def _print_table(title: str, rows: Dict[str, List[float]],
                 digits: int = 3) -> None:
  print(f"\n{title}\n")
  print("| | median | runs |")
  print("|---|---:|---|")
  for name, values in rows.items():
    print(f"| {name} | {statistics.median(values):.{digits}f} | "
          f"{', '.join(f'{v:.{digits}f}' for v in values)} |")


def train_main(args: argparse.Namespace, clock: PhaseClock) -> int:
  """--train: a train() call's phases against the v1-Adam ceiling."""
  # pylint: disable=g-import-not-at-top
  from estimator_compat.engines.function import step_reuse

  program_input_fn, program_model_fn = _program(clock)

  def new_estimator():
    return tfe.Estimator(
        program_model_fn, config=tfe.RunConfig(model_dir=tempfile.mkdtemp()))

  estimator = new_estimator()
  estimator.train(input_fn, steps=10)  # Warm-ups (the input's import too).
  estimator.train(input_fn, steps=10)
  hand_dir = tempfile.mkdtemp()
  handwritten_checkpoint(hand_dir)
  handwritten_train_whole_call_seconds(hand_dir, 10)  # warm-up
  phases: Dict[str, List[float]] = collections.defaultdict(list)
  rates: Dict[str, List[float]] = collections.defaultdict(list)
  unit = "CPU seconds" if args.cpu else "seconds"
  for _ in range(args.rounds):
    if args.train_fresh:
      estimator = new_estimator()
      step_reuse._KEPT.clear()  # pylint: disable=protected-access
    gc.collect()
    times = ours_train(estimator, clock, args.train_steps, program_input_fn)
    out = _fixed_and_per_step(clock)
    loop_steps = clock.batches["loop"] + clock.batches["loop first call"]
    for name in TRAIN_PHASES + ("loop trace", "total"):
      if name in out:
        phases[name].append(out[name])
    if "loop" in out:
      per_step = out["loop"] / max(1, clock.batches["loop"])
      phases["per step, loop (us)"].append(per_step * 1e6)
      phases["fixed: total - every step at the loop's rate"].append(
          out["total"] - per_step * args.train_steps)
    phases["steps in the loop's calls"].append(loop_steps)
    rates["ours train steps/s (wall)"].append(
        args.train_steps / times["wall"])
    rates["ours train steps per CPU second"].append(
        args.train_steps / times["cpu"])
    gc.collect()
    rates["hand-written v1 Adam steps/s (wall)"].append(
        handwritten_steps_per_second(args.train_steps, args.train_steps, "v1"))
    gc.collect()
    rates["hand-written v1 Adam steps per CPU second"].append(
        handwritten_steps_per_second(args.train_steps, args.train_steps, "v1",
                                     clock=time.process_time))
    gc.collect()
    whole_wall, whole_cpu = handwritten_train_whole_call_seconds(
        hand_dir, args.train_steps)
    rates["hand-written whole call steps/s (wall)"].append(
        args.train_steps / whole_wall)
    rates["hand-written whole call steps per CPU second"].append(
        args.train_steps / whole_cpu)
    rates["ours / hand-written (wall)"].append(
        rates["ours train steps/s (wall)"][-1] /
        rates["hand-written v1 Adam steps/s (wall)"][-1])
    rates["ours / hand-written (CPU)"].append(
        rates["ours train steps per CPU second"][-1] /
        rates["hand-written v1 Adam steps per CPU second"][-1])
    rates["ours / hand-written whole call (wall)"].append(
        rates["ours train steps/s (wall)"][-1] /
        rates["hand-written whole call steps/s (wall)"][-1])
    rates["ours / hand-written whole call (CPU)"].append(
        rates["ours train steps per CPU second"][-1] /
        rates["hand-written whole call steps per CPU second"][-1])
    floor = floor_seconds(out, FLOOR_PHASES)
    ceiling = args.train_steps / rates[
        "hand-written v1 Adam steps per CPU second" if args.cpu else
        "hand-written v1 Adam steps/s (wall)"][-1]
    phases["contract floor (program, hooks, saves)"].append(floor)
    if "loop" in out:
      rates["loop speed: hand-written per step / ours' loop per step (" +
            ("CPU" if args.cpu else "wall") + ")"].append(
                ceiling / args.train_steps /
                (out["loop"] / max(1, clock.batches["loop"])))
    rates["cap on ours / hand-written (" + ("CPU" if args.cpu else "wall") +
          ") under the contract"].append(ceiling / (ceiling + floor))
  print(f"MLP 784-128-10, batch 256; train(steps={args.train_steps}) at the "
        "default RunConfig, " + ("a new Estimator and no kept steps per "
                                 "round" if args.train_fresh else
                                 "one Estimator training on") +
        f"; {args.rounds} interleaved round(s); medians (each round's "
        "values after the median)")
  _print_table("| rates |", rates)
  _print_table(f"train() call, {unit} per phase (exclusive):", phases, 4)
  charts.maybe(charts.stacked, {
      "train()": {name: statistics.median(phases[name])
                  for name in TRAIN_PHASES if name in phases}},
               path=args.png,
               title=f"Where a train(steps={args.train_steps}) call's time "
               "goes", unit=unit)
  return 0


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--eval_steps", type=int, default=500)
  parser.add_argument("--predict_batches", type=int, default=500)
  parser.add_argument("--small_batches", type=int, default=4)
  parser.add_argument("--small_calls", type=int, default=5,
                      help="small calls per round (their median is kept)")
  parser.add_argument("--cpu", action="store_true",
                      help="phases in CPU seconds of this process (all its "
                      "threads; steadier than wall time on a shared machine)")
  parser.add_argument("--quick", action="store_true",
                      help="1 round of 100 batches: checks that it runs")
  parser.add_argument("--png", default=None,
                      help="also draw each call's phases as stacked bars "
                      "here (needs matplotlib: pip install -e .[bench])")
  parser.add_argument("--train", action="store_true",
                      help="time train() calls instead (see above)")
  parser.add_argument("--train_steps", type=int, default=2000)
  parser.add_argument("--train_fresh", action="store_true",
                      help="with --train: each timed call is a new "
                      "Estimator's first, with no steps kept from another")
  args = parser.parse_args()
  if args.quick:
    args.rounds, args.eval_steps, args.predict_batches = 1, 100, 100
    args.small_calls, args.train_steps = 2, 300

  clock = PhaseClock(time.process_time if args.cpu else time.perf_counter)
  install(clock)
  if args.train:
    return train_main(args, clock)
  program_input_fn, program_model_fn = _program(clock)
  estimator = tfe.Estimator(
      program_model_fn, config=tfe.RunConfig(model_dir=tempfile.mkdtemp()))
  estimator.train(input_fn, steps=10)
  # Warm-ups, with the inputs timed below (a later call that builds the
  # same input graph reuses its import, as every timed call then does).
  estimator.evaluate(input_fn, steps=10)
  for batches in (args.predict_batches, args.small_batches):
    for _ in estimator.predict(_batches(batches),
                               yield_single_examples=False):
      pass
  hand_dir = tempfile.mkdtemp()
  handwritten_checkpoint(hand_dir)
  handwritten_eval_whole_call_seconds(hand_dir, 10)  # warm-ups
  handwritten_predict_whole_call_seconds(hand_dir, 10)

  runs: Dict[str, Dict[str, List[float]]] = collections.defaultdict(
      lambda: collections.defaultdict(list))
  rates: Dict[str, List[float]] = collections.defaultdict(list)
  for _ in range(args.rounds):
    floors = {}  # This round's contract floor per call.
    gc.collect()
    times = ours_evaluate(estimator, clock, args.eval_steps, program_input_fn)
    floors["evaluate"] = floor_seconds(clock.times, CALL_FLOOR_PHASES)
    for k, v in _fixed_and_per_step(clock).items():
      runs["evaluate"][k].append(v)
    rates["ours evaluate steps/s"].append(args.eval_steps / times["wall"])
    gc.collect()
    rates["hand-written evaluate steps/s"].append(
        handwritten_eval_steps_per_second(args.eval_steps))
    gc.collect()
    rates["hand-written whole evaluate call steps/s"].append(
        args.eval_steps / handwritten_eval_whole_call_seconds(
            hand_dir, args.eval_steps))
    gc.collect()
    times = ours_predict(estimator, clock, args.predict_batches,
                         program_input_fn)
    floors["predict"] = floor_seconds(clock.times, CALL_FLOOR_PHASES)
    for k, v in _fixed_and_per_step(clock).items():
      runs["predict"][k].append(v)
    rates["ours predict batches/s"].append(
        args.predict_batches / times["wall"])
    gc.collect()
    rates["hand-written predict batches/s"].append(
        handwritten_predict_batches_per_second(args.predict_batches))
    gc.collect()
    rates["hand-written whole predict call batches/s"].append(
        args.predict_batches / handwritten_predict_whole_call_seconds(
            hand_dir, args.predict_batches))
    gc.collect()
    rates["ours predict examples/s"].append(
        ours_predict_examples_per_second(estimator, args.predict_batches))
    gc.collect()
    rates["hand-written predict examples/s"].append(
        handwritten_predict_examples_per_second(args.predict_batches))
    small_predict, small_eval = [], []
    for _ in range(args.small_calls):
      gc.collect()
      small_predict.append(
          ours_predict(estimator, clock, args.small_batches)["wall"])
      gc.collect()
      small_eval.append(ours_evaluate(estimator, clock, 1)["wall"])
    rates[f"ours predict() of {args.small_batches} batches, s"].append(
        statistics.median(small_predict))
    rates["ours evaluate(steps=1), s"].append(statistics.median(small_eval))
    rates["evaluate ours / hand-written"].append(
        rates["ours evaluate steps/s"][-1] /
        rates["hand-written evaluate steps/s"][-1])
    rates["predict ours / hand-written"].append(
        rates["ours predict batches/s"][-1] /
        rates["hand-written predict batches/s"][-1])
    rates["predict examples ours / hand-written"].append(
        rates["ours predict examples/s"][-1] /
        rates["hand-written predict examples/s"][-1])
    rates["evaluate ours / hand-written whole call"].append(
        rates["ours evaluate steps/s"][-1] /
        rates["hand-written whole evaluate call steps/s"][-1])
    rates["predict ours / hand-written whole call"].append(
        rates["ours predict batches/s"][-1] /
        rates["hand-written whole predict call batches/s"][-1])
    for call, batches in (("evaluate", args.eval_steps),
                          ("predict", args.predict_batches)):
      if not args.cpu:
        ceiling = batches / rates[f"hand-written {call} " + (
            "steps/s" if call == "evaluate" else "batches/s")][-1]
        rates[f"cap on {call} ours / hand-written under the contract"
             ].append(ceiling / (ceiling + floors[call]))
      loop = runs[call].get("per batch, loop (us)")
      if loop and not args.cpu:
        hand = rates[f"hand-written {call} " + (
            "steps/s" if call == "evaluate" else "batches/s")][-1]
        rates[f"{call} per batch, ours' loop / hand-written (speed)"].append(
            1e6 / hand / loop[-1])

  print(f"MLP 784-128-10, batch 256; evaluate(steps={args.eval_steps}), "
        f"predict() of {args.predict_batches} batches; {args.rounds} "
        "interleaved round(s); medians (each round's values after '|')\n")
  print("| | median | runs |")
  print("|---|---:|---|")
  for name, values in rates.items():
    print(f"| {name} | {statistics.median(values):.3f} | "
          f"{', '.join(f'{v:.3f}' for v in values)} |")
  for call, phases in runs.items():
    unit = "CPU seconds" if args.cpu else "seconds"
    print(f"\n{call}() call, {unit} per phase (exclusive):\n")
    print("| phase | median | runs |")
    print("|---|---:|---|")
    for name in PHASES + ("loop trace", "total", "per batch, loop (us)",
                          "per batch, single (us)"):
      if name in phases:
        values = phases[name]
        print(f"| {name} | {statistics.median(values):.4f} | "
              f"{', '.join(f'{v:.4f}' for v in values)} |")
  charts.maybe(charts.stacked, {
      f"{call}()": {name: statistics.median(phases[name])
                    for name in PHASES if name in phases}
      for call, phases in runs.items()}, path=args.png,
               title=f"Where a call's time goes (evaluate: {args.eval_steps} "
               f"steps, predict: {args.predict_batches} batches)",
               unit="CPU seconds" if args.cpu else "seconds")
  return 0


if __name__ == "__main__":
  sys.exit(main())
