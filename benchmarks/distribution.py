r"""Benchmark: our layer vs hand-written TF2 under each strategy.

  python benchmarks/distribution.py [--steps 2000] [--runs 3]
  BENCH_TF2_OPTIMIZER=keras python benchmarks/distribution.py ...

Trains benchmarks/mlp_model.py (784-128-10, batch 256 per replica) through
estimator_compat and as hand-written TF2 (tf.Variables, GradientTape, the
model's v1 Adam by default or Keras Adam with BENCH_TF2_OPTIMIZER=keras,
strategy.run in a tf.function; a ClusterCoordinator for parameter
servers, with the same schedule as ours: one closure per worker in flight,
the next scheduled as the oldest finishes) on the
same strategy, and prints a Markdown table: steps/s and examples/s (medians
of --runs), and our overhead as the ratio of the two in the same run. Each
timed region is one training job after a warm-up: ours one `train(steps=N)`
call (which calls input_fn and traces model_fn once), hand-written TF2 a
fresh input pipeline (per worker under PS) and a fresh tf.function run for N
steps (traced once).
Clusters run on loopback through --local_cluster. Speed goals live here, not
in tests.
"""

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BATCH = 256
# (key, label, strategy, local cluster or logical CPUs, replicas per step,
#  workers: the x of the scaling chart, or 0 when the case is not in it)
CASES = [
    ("default", "default", "default", None, 1, 0),
    ("mirrored2", "Mirrored x2 (logical CPUs)", "mirrored", "cpus:2", 2, 0),
    ("mwms1", "MWMS x1", "multi_worker_mirrored", "worker:1", 1, 1),
    ("mwms2", "MWMS x2", "multi_worker_mirrored", "worker:2", 2, 2),
    ("mwms4", "MWMS x4", "multi_worker_mirrored", "worker:4", 4, 4),
    ("ps1x1", "PS 1 ps, 1 worker", "parameter_server", "worker:1,ps:1", 1, 0),
    ("ps1x2", "PS 1 ps, 2 workers", "parameter_server", "worker:2,ps:1", 1, 0),
    ("ps2x1", "PS 2 ps, 1 worker", "parameter_server", "worker:1,ps:2", 1, 1),
    ("ps2x2", "PS 2 ps, 2 workers", "parameter_server", "worker:2,ps:2", 1, 2),
    ("ps2x4", "PS 2 ps, 4 workers", "parameter_server", "worker:4,ps:2", 1, 4),
]
# Named groups for --cases.
GROUPS = {
    "large": "ps2x4,mwms4",
    "scaling": "ps2x1,ps2x2,ps2x4,mwms1,mwms2,mwms4",
    "small": "default,mirrored2,mwms2,ps1x1,ps1x2",
}
# Steps per loop: "default" is the default RunConfig (steps_per_loop=None:
# automatic; one step per closure or call on a multi-worker cluster, where
# hand-written TF2 runs one step per call too); a number N is
# RunConfig(steps_per_loop=N), N steps per call on both sides.


class SteadyClock:
  """Steps/s between the first and the last step call of the timed job.

  Each side reports every finished call (ours: each runner call the
  controller makes; TF2: each call or fetched closure) with its steps; the
  steady rate leaves out what comes before the first call returns (input
  pipeline, tracing, restore) and after the last (the final checkpoint), so
  whole-job and steady rates together split fixed cost from per-step cost.
  """

  def __init__(self):
    self.on = False
    self.calls = []  # (time, steps) of each finished call.

  def record(self, steps: int) -> None:
    if self.on:
      self.calls.append((time.perf_counter(), steps))

  def rate(self) -> float:
    if len(self.calls) < 2:
      return 0.0
    steps = sum(n for _, n in self.calls[1:])
    return steps / max(self.calls[-1][0] - self.calls[0][0], 1e-9)


STEADY = SteadyClock()


def _count_runner_calls() -> None:
  """Reports each call of our runners (PS and in-process) to STEADY."""
  from estimator_compat.engines.function import ps_runner, sync_runner  # pylint: disable=g-import-not-at-top
  for runner in (ps_runner.PsRunner, sync_runner.SyncRunner):
    def counted(self, *args, _train=runner.train, **kwargs):
      run = _train(self, *args, **kwargs)
      if run is not None:
        STEADY.record(run.steps)
      return run
    runner.train = counted


def _ours(steps: int, steps_per_loop: Optional[int], saves: bool) -> float:
  """Steps/s of one train(steps) call after a warm-up call.

  Args:
    steps: steps of the timed call.
    steps_per_loop: RunConfig.steps_per_loop (None: automatic).
    saves: True: the default RunConfig's checkpoints, summaries and log
      lines; False: none of them (save_checkpoints_steps, log_step_count_steps
      out of reach, save_summary_steps=0), as hand-written TF2 writes none.
  """
  import estimator_compat as tfe  # pylint: disable=g-import-not-at-top
  sys.path.insert(0, HERE)
  from mlp_model import input_fn, model_fn  # pylint: disable=g-import-not-at-top
  quiet = {} if saves else dict(save_checkpoints_steps=10 ** 9,
                                save_summary_steps=0,
                                log_step_count_steps=10 ** 9)
  config = tfe.RunConfig(model_dir=os.environ["BENCH_MODEL_DIR"],
                         steps_per_loop=steps_per_loop, **quiet)
  estimator = tfe.Estimator(model_fn, config=config)
  estimator.train(input_fn, steps=max(10, steps_per_loop or 1))  # warm-up
  _count_runner_calls()
  STEADY.on = True
  start = time.perf_counter()
  estimator.train(input_fn, steps=steps)
  return steps / (time.perf_counter() - start)


def _handwritten(strategy_name: str, steps: int, steps_per_call: int) -> float:
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from estimator_compat.distribute import cluster_tasks, strategies  # pylint: disable=g-import-not-at-top
  from estimator_compat.front import configuration  # pylint: disable=g-import-not-at-top
  from estimator_compat.run_config import RunConfig  # pylint: disable=g-import-not-at-top
  sys.path.insert(0, HERE)
  from mlp_model import input_fn  # pylint: disable=g-import-not-at-top
  config = RunConfig()
  choices = configuration.resolve(config)
  if cluster_tasks.serves_only(config, choices):
    cluster_tasks.serve_until_done(config, choices, None)
    return 0.0
  configuration.set_process_strategy(strategy_name)
  strategy = strategies.for_training(
      config, configuration.strategy_flags()) or tf.distribute.get_strategy()
  with strategy.scope():
    init = tf.keras.initializers.GlorotUniform(seed=0)
    weights = [tf.Variable(init([784, 128])), tf.Variable(tf.zeros([128])),
               tf.Variable(init([128, 10])), tf.Variable(tf.zeros([10]))]
    if os.environ.get("BENCH_TF2_OPTIMIZER", "v1") == "keras":
      optimizer = tf.keras.optimizers.Adam(1e-3)
    else:
      # The legacy model's optimizer, so the ratio is our layer's overhead
      # and not the cost of another optimizer (v1 Adam updates two beta
      # powers per step: extra round trips to a ps).
      optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
    # A step counter, as the legacy program keeps (Keras Adam counts its
    # iterations itself).
    step_counter = tf.Variable(0, dtype=tf.int64, trainable=False)

  def step(features, labels):
    with tf.GradientTape() as tape:
      hidden = tf.nn.relu(features["x"] @ weights[0] + weights[1])
      logits = hidden @ weights[2] + weights[3]
      loss = tf.reduce_mean(
          tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
      loss /= strategy.num_replicas_in_sync
    grads_and_vars = zip(tape.gradient(loss, weights), weights)
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
      optimizer.apply_gradients(grads_and_vars, global_step=step_counter)
    else:
      optimizer.apply_gradients(grads_and_vars)

  def train_steps(iterator, n):
    for _ in tf.range(n):
      strategy.run(step, args=next(iterator))

  # The timed job traces its own function once, as ours traces model_fn
  # once per train() call: both timed regions hold one trace.
  train = tf.function(train_steps)
  n = tf.constant(steps_per_call)
  if strategies.is_parameter_server(strategy):
    coordinator = strategies.coordinator(strategy)
    workers = strategy.extended._num_workers  # pylint: disable=protected-access
    def per_worker_iterator():
      return iter(coordinator.create_per_worker_dataset(
          lambda: input_fn()))  # pylint: disable=unnecessary-lambda

    def rounds(total):
      # One closure per worker in flight: the next is scheduled as the
      # oldest finishes (its result fetched), as our PS loop does.
      inflight, scheduled = collections.deque(), 0
      while scheduled < total or inflight:
        while len(inflight) < workers and scheduled < total:
          inflight.append(coordinator.schedule(train, args=(iterator, n)))
          scheduled += steps_per_call
        inflight.popleft().fetch()
        STEADY.record(steps_per_call)
      return scheduled
    iterator = per_worker_iterator()
    rounds(workers * steps_per_call)  # warm-up
    train = tf.function(train_steps)
    STEADY.on = True
    start = time.perf_counter()
    iterator = per_worker_iterator()
    done = rounds(steps)
    rate = done / (time.perf_counter() - start)
    cluster_tasks.mark_done(None)
    return rate
  def replica_iterator():
    return iter(strategy.distribute_datasets_from_function(
        lambda context: input_fn()))

  train(replica_iterator(), n)  # warm-up
  calls = max(1, steps // steps_per_call)
  train = tf.function(train_steps)
  STEADY.on = True
  start = time.perf_counter()
  iterator = replica_iterator()
  for _ in range(calls):
    train(iterator, n)
    STEADY.record(steps_per_call)
  return calls * steps_per_call / (time.perf_counter() - start)


def _task_main(args) -> int:
  """One task of a measurement (also run as each cluster task)."""
  import estimator_compat  # pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  if args.cpus:
    tf.config.set_logical_device_configuration(
        tf.config.list_physical_devices("CPU")[0],
        [tf.config.LogicalDeviceConfiguration()] * args.cpus)
  if args.impl == "ours":
    estimator_compat.install()  # mlp_model uses tf.estimator
    from estimator_compat.distribute import flags as distribution_flags  # pylint: disable=g-import-not-at-top
    distribution_flags.apply([sys.argv[0], f"--strategy={args.strategy}"])
    rate = _ours(args.steps, args.steps_per_loop or None,
                 args.saves == "default")
  else:
    rate = _handwritten(args.strategy, args.steps, args.steps_per_loop or 1)
  from estimator_compat.run_config import RunConfig  # pylint: disable=g-import-not-at-top
  if RunConfig().is_chief and rate:
    print("RATE " + json.dumps([rate, STEADY.rate()]), flush=True)
  return 0


def _measure(strategy: str, where: Optional[str], impl: str, steps: int,
             spl: int, saves: str = "default") -> List[float]:
  """[whole-job, steady] steps/s of one measurement in fresh processes
  (spl 0: the default, automatic)."""
  model_dir = tempfile.mkdtemp(prefix="bench_")
  command = [sys.executable, os.path.abspath(__file__), "--task",
             f"--impl={impl}", f"--strategy={strategy}", f"--steps={steps}",
             f"--steps_per_loop={spl}", f"--saves={saves}"]
  if where and where.startswith("cpus:"):
    command.append(f"--cpus={where[5:]}")
  elif where:
    command = command[:2] + [f"--local_cluster={where}"] + command[2:]
  env = dict(os.environ, BENCH_MODEL_DIR=model_dir, TF_CPP_MIN_LOG_LEVEL="3",
             PYTHONPATH=ROOT)
  env.pop("TF_CONFIG", None)
  done = subprocess.run(command, env=env, capture_output=True, text=True,
                        timeout=1800, check=False)
  rates = [json.loads(line.split("RATE ", 1)[1])
           for line in done.stdout.splitlines() if "RATE " in line]
  if done.returncode != 0 or not rates:
    raise RuntimeError(f"{' '.join(command)} failed:\n"
                       f"{(done.stdout + done.stderr)[-3000:]}")
  shutil.rmtree(model_dir, ignore_errors=True)
  return rates[-1]


def _chosen_cases(text: str) -> List[Tuple]:
  """CASES named by --cases: keys, groups, 0-based numbers, or all."""
  if text == "all":
    return list(CASES)
  by_key = {case[0]: case for case in CASES}
  chosen = []
  for name in text.split(","):
    name = name.strip()
    if name in GROUPS:
      chosen += _chosen_cases(GROUPS[name])
    elif name in by_key:
      chosen.append(by_key[name])
    elif name.isdigit() and int(name) < len(CASES):
      chosen.append(CASES[int(name)])
    else:
      raise SystemExit(f"--cases: unknown case {name!r}; use numbers, "
                       f"{', '.join(by_key)}, {', '.join(GROUPS)} or all.")
  return list(dict.fromkeys(chosen))


def _loops(text: str) -> List[int]:
  """--loops as steps per loop, 0 for the default (automatic)."""
  loops = []
  for item in text.split(","):
    item = item.strip()
    if item == "default":
      loops.append(0)
    elif item.isdigit() and int(item) >= 1:
      loops.append(int(item))
    else:
      raise SystemExit(f"--loops: {item!r} is neither default nor a number "
                       ">= 1, e.g. --loops default,50.")
  return loops


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=2000,
                      help="steps of each timed train() call / TF2 job")
  parser.add_argument("--runs", type=int, default=3)
  parser.add_argument("--cases", default="all",
                      help="comma-separated case keys, groups (" +
                      ", ".join(GROUPS) + ") or 0-based numbers, or all: " +
                      ", ".join(case[0] for case in CASES))
  parser.add_argument("--loops", default="default,50",
                      help="comma-separated steps per loop: default (the "
                      "default RunConfig) and/or numbers")
  parser.add_argument("--nothing_saved", action="store_true",
                      help="also time ours with no checkpoint, summary or "
                      "log line, as hand-written TF2 writes none")
  parser.add_argument("--png", default=None,
                      help="write the scaling chart here (needs matplotlib: "
                      "pip install -e .[bench])")
  parser.add_argument("--json", default=None,
                      help="write the table's rows here, to redraw with "
                      "--replot")
  parser.add_argument("--replot", default=None,
                      help="measure nothing: draw --png from a --json file")
  parser.add_argument("--task", action="store_true", help=argparse.SUPPRESS)
  parser.add_argument("--local_cluster", help=argparse.SUPPRESS)
  parser.add_argument("--impl", choices=["ours", "handwritten"],
                      help=argparse.SUPPRESS)
  parser.add_argument("--strategy", default="default", help=argparse.SUPPRESS)
  parser.add_argument("--steps_per_loop", type=int, default=1,
                      help=argparse.SUPPRESS)
  parser.add_argument("--saves", choices=["default", "none"],
                      default="default", help=argparse.SUPPRESS)
  parser.add_argument("--cpus", type=int, default=0, help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.local_cluster:
    from estimator_compat.distribute import local_cluster  # pylint: disable=g-import-not-at-top
    command = [a for a in sys.orig_argv if not a.startswith("--local_cluster")]
    return local_cluster.launch(args.local_cluster, args.strategy, command)
  if args.task:
    return _task_main(args)
  if args.replot:
    with open(args.replot) as f:
      _chart(json.load(f)["rows"], args.png)
    return 0
  cases, loops = _chosen_cases(args.cases), _loops(args.loops)
  extra = (" ours, nothing saved | nothing saved / TF2 |"
           if args.nothing_saved else "")
  print(f"{args.steps} steps per timed job, batch {BATCH} per replica, "
        f"medians of {args.runs} interleaved runs")
  print()
  print("| strategy | steps/loop | ours steps/s | TF2 steps/s | ours / TF2 | "
        f"steady ours / TF2 |{extra}")
  print("|---|---|---:|---:|---:|---:|" + ("---:|---:|" if extra else ""))
  rows = []
  for key, label, strategy, where, replicas, workers in cases:
    for spl in loops:
      runs = collections.defaultdict(list)
      for _ in range(args.runs):
        ours = _measure(strategy, where, "ours", args.steps, spl)
        quiet = args.nothing_saved and _measure(strategy, where, "ours",
                                                args.steps, spl, "none")
        theirs = _measure(strategy, where, "handwritten", args.steps, spl)
        runs["ours"].append(ours[0])
        runs["tf2"].append(theirs[0])
        runs["ratio"].append(ours[0] / theirs[0])
        if ours[1] and theirs[1]:
          runs["steady"].append(ours[1] / theirs[1])
        if quiet:
          runs["quiet"].append(quiet[0])
          runs["quiet_ratio"].append(quiet[0] / theirs[0])
      med = {name: statistics.median(v) for name, v in runs.items()}
      loop = "default" if spl == 0 else str(spl)
      cells = (f" {med['quiet']:.0f} | {med['quiet_ratio']:.2f} |"
               if args.nothing_saved else "")
      steady = f"{med['steady']:.2f}" if "steady" in med else "n/a"
      print(f"| {label} | {loop} | {med['ours']:.0f} | {med['tf2']:.0f} | "
            f"{med['ratio']:.2f} | {steady} |{cells}", flush=True)
      rows.append(dict(key=key, label=label, strategy=strategy,
                       workers=workers, replicas=replicas, loop=loop, **med))
  if args.json:
    with open(args.json, "w") as f:
      json.dump(dict(steps=args.steps, runs=args.runs, rows=rows), f,
                indent=1)
  if args.png:
    _chart(rows, args.png)
  return 0


def _chart(rows: List[Dict[str, Any]], path: str) -> None:
  """The scaling chart of the rows (workers on x), if matplotlib is here."""
  sys.path.insert(0, HERE)
  import charts  # pylint: disable=g-import-not-at-top
  series = collections.defaultdict(list)
  for row in rows:
    if row["workers"]:
      family = "PS, 2 ps" if row["strategy"] == "parameter_server" else "MWMS"
      for impl in ("ours", "tf2"):
        name = f"{family}, {'ours' if impl == 'ours' else 'hand-written TF2'}"
        series[(name, row["loop"])].append(
            (row["workers"], row[impl] * BATCH * row["replicas"]))
  charts.scaling(series, path, ylabel="examples/s",
                 title="Training examples/s by workers (loopback cluster on "
                 "2 cores: the ratios count)")


if __name__ == "__main__":
  sys.exit(main())
