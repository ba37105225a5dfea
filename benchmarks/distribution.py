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
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BATCH = 256
CASES = [  # (label, strategy, local cluster or logical CPUs, replicas)
    ("default", "default", None, 1),
    ("Mirrored x2 (logical CPUs)", "mirrored", "cpus:2", 2),
    ("MWMS x2", "multi_worker_mirrored", "worker:2", 2),
    ("PS 1 ps, 1 worker", "parameter_server", "worker:1,ps:1", 1),
    ("PS 1 ps, 2 workers", "parameter_server", "worker:2,ps:1", 1),
]


def _ours(strategy: str, steps: int, steps_per_loop: int) -> float:
  import estimator_compat as tfe  # pylint: disable=g-import-not-at-top
  sys.path.insert(0, HERE)
  from mlp_model import input_fn, model_fn  # pylint: disable=g-import-not-at-top
  config = tfe.RunConfig(model_dir=os.environ["BENCH_MODEL_DIR"],
                         save_checkpoints_steps=10 ** 9, save_summary_steps=0,
                         log_step_count_steps=10 ** 9,
                         steps_per_loop=steps_per_loop)
  estimator = tfe.Estimator(model_fn, config=config)
  estimator.train(input_fn, steps=max(10, steps_per_loop))  # warm-up
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
      return scheduled
    iterator = per_worker_iterator()
    rounds(workers * steps_per_call)  # warm-up
    train = tf.function(train_steps)
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
  start = time.perf_counter()
  iterator = replica_iterator()
  for _ in range(calls):
    train(iterator, n)
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
    rate = _ours(args.strategy, args.steps, args.steps_per_loop)
  else:
    rate = _handwritten(args.strategy, args.steps, args.steps_per_loop)
  from estimator_compat.run_config import RunConfig  # pylint: disable=g-import-not-at-top
  if RunConfig().is_chief and rate:
    print("RATE " + json.dumps(rate), flush=True)
  return 0


def _measure(strategy: str, where, impl: str, steps: int, spl: int) -> float:
  model_dir = tempfile.mkdtemp(prefix="bench_")
  command = [sys.executable, os.path.abspath(__file__), "--task",
             f"--impl={impl}", f"--strategy={strategy}", f"--steps={steps}",
             f"--steps_per_loop={spl}"]
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
  return rates[-1]


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=2000)
  parser.add_argument("--runs", type=int, default=3)
  parser.add_argument("--cases", default="all",
                      help="comma-separated case numbers (0-based) or all")
  parser.add_argument("--task", action="store_true", help=argparse.SUPPRESS)
  parser.add_argument("--local_cluster", help=argparse.SUPPRESS)
  parser.add_argument("--impl", choices=["ours", "handwritten"])
  parser.add_argument("--strategy", default="default")
  parser.add_argument("--steps_per_loop", type=int, default=1)
  parser.add_argument("--cpus", type=int, default=0)
  args = parser.parse_args()
  if args.local_cluster:
    from estimator_compat.distribute import local_cluster  # pylint: disable=g-import-not-at-top
    command = [a for a in sys.orig_argv if not a.startswith("--local_cluster")]
    return local_cluster.launch(args.local_cluster, args.strategy, command)
  if args.task:
    return _task_main(args)
  chosen = range(len(CASES)) if args.cases == "all" else [
      int(c) for c in args.cases.split(",")]
  print("| strategy | steps/loop | ours steps/s | ours examples/s | TF2 "
        "steps/s | TF2 examples/s | ours / TF2 |")
  print("|---|---|---|---|---|---|---|")
  for index in chosen:
    label, strategy, where, replicas = CASES[index]
    for spl in (1, 50):
      ours, theirs, ratios = [], [], []
      for _ in range(args.runs):
        a = _measure(strategy, where, "ours", args.steps, spl)
        b = _measure(strategy, where, "handwritten", args.steps, spl)
        ours.append(a)
        theirs.append(b)
        ratios.append(a / b)
      a, b = statistics.median(ours), statistics.median(theirs)
      print(f"| {label} | {spl} | {a:.0f} | {a * BATCH * replicas:.0f} | "
            f"{b:.0f} | {b * BATCH * replicas:.0f} | "
            f"{statistics.median(ratios):.2f} |", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
