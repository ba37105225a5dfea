r"""Trains and evaluates any legacy model_fn with an input_fn.

  python -m estimator_compat.train \
      --model_fn=my_pkg.model:model_fn --input_fn=my_pkg.data:input_fn \
      --model_dir=/tmp/run1 --train_steps=2000 --params='{"hidden": 64}'

Without flags it trains the embedded demo (the seed document's model) in a
new temporary model_dir. The input_fn may take `mode`, so one function can
serve training (repeated, shuffled) and evaluation (one pass). Training
resumes from the newest checkpoint in --model_dir; --train_steps is the
global step to reach (max_steps), so re-running a finished job only
evaluates.
"""

import importlib
import json
import os
import sys
import tempfile
from typing import Any, Callable

from absl import app
from absl import flags
from absl import logging

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "model_fn", "estimator_compat.demo_model:model_fn",
    "The legacy model_fn, as module:function (the module must be importable).")
flags.DEFINE_string(
    "input_fn", "estimator_compat.demo_model:input_fn",
    "The training input_fn, as module:function. It may take mode, params, "
    "config and return a Dataset, (features, labels) or features.")
flags.DEFINE_string(
    "eval_input_fn", None,
    "The evaluation input_fn, as module:function (default: --input_fn, "
    "called with mode=eval).")
flags.DEFINE_string(
    "model_dir", None,
    "Where checkpoints and summaries go; training resumes from it. Default: "
    "a new temporary directory (printed).")
flags.DEFINE_integer("train_steps", 1000,
                     "Train until global_step reaches this (max_steps).",
                     lower_bound=1)
flags.DEFINE_integer("eval_steps", None,
                     "Batches per evaluation (default: until the eval input "
                     "ends).", lower_bound=1)
flags.DEFINE_string("params", "{}",
                    "Hyperparameters for model_fn and input_fn, as a JSON "
                    "object, e.g. '{\"learning_rate\": 0.01}'.")
flags.DEFINE_integer("tf_random_seed", None, "Graph-level random seed.")
flags.DEFINE_integer("save_checkpoints_steps", None,
                     "Save a checkpoint every N steps (default: every 600 s).",
                     lower_bound=1)
flags.DEFINE_integer("log_step_count_steps", 100,
                     "Log loss and steps/sec every N steps.", lower_bound=1)
flags.DEFINE_enum("engine", None, ["function", "graph"],
                  "How each mode runs: 'function' (tf.function step functions, "
                  "the default) or 'graph' (TF1 graph + session). Default: "
                  "$ESTIMATOR_COMPAT_ENGINE, else function.")
flags.DEFINE_integer("steps_per_loop", None,
                     "Training steps per function call (function engine). "
                     "Default: automatic (every step up to the next one a "
                     "hook, summary, log line or checkpoint observes; the "
                     "same results as 1). N: hooks, logging and "
                     "checkpoint/summary cadence are checked once per call.",
                     lower_bound=1)
flags.DEFINE_bool("jit_compile", False,
                  "Compile the training, evaluation and prediction steps with "
                  "XLA (function engine).")
flags.DEFINE_bool("save_on_preemption", True,
                  "On SIGTERM or SIGINT, finish the step in progress, save a "
                  "checkpoint at the step reached, then exit (143 for "
                  "SIGTERM). --nosave_on_preemption: the signal ends the "
                  "process at once (losing the steps since the last save).")
flags.DEFINE_enum("strategy", None, ["default", "one_device", "mirrored",
                                      "multi_worker_mirrored",
                                      "parameter_server"],
                  "tf.distribute strategy. Default: none, or parameter "
                  "server when TF_CONFIG has ps tasks.")
flags.DEFINE_string("local_cluster", None,
                    "Run as a loopback cluster of processes, e.g. "
                    "worker:2,ps:1[,evaluator:1] (servers listen on "
                    "127.0.0.1 only).")
flags.DEFINE_integer("min_shard_bytes", None,
                     "Parameter-server training: partition variables into "
                     "shards of at least this many bytes.", lower_bound=1)
flags.DEFINE_integer("max_shards", None,
                     "Parameter-server training: at most this many shards "
                     "per variable.", lower_bound=1)
flags.DEFINE_integer("throttle_secs", 600,
                     "Evaluate after a checkpoint at most every N seconds; "
                     "there is always a final evaluation.", lower_bound=0)


def _validate_params(value: str) -> bool:
  try:
    return isinstance(json.loads(value), dict)
  except json.JSONDecodeError:
    return False


flags.register_validator(
    "params", _validate_params,
    message="--params must be a JSON object, e.g. --params='{\"hidden\": 64}'.")


def load_callable(spec: str, flag: str) -> Callable[..., Any]:
  """Imports `module:attribute` and returns the callable it names.

  Raises:
    app.UsageError: the spec is malformed, the module or attribute is missing,
      or the attribute is not callable.
  """
  module_name, sep, attribute = spec.partition(":")
  if not sep or not module_name or not attribute:
    raise app.UsageError(
        f"--{flag}={spec!r} must look like package.module:function.")
  try:
    module = importlib.import_module(module_name)
  except ImportError as e:
    raise app.UsageError(
        f"--{flag}: cannot import module {module_name!r} ({e}). Fix: run "
        "from the directory that holds it, or add it to PYTHONPATH.") from e
  target = getattr(module, attribute, None)
  if not callable(target):
    raise app.UsageError(
        f"--{flag}: {module_name} has no callable named {attribute!r}.")
  return target


def main(argv):
  """Runs the job; a usage error prints one line, not the whole help."""
  if len(argv) > 1:
    return _usage_error(f"Unexpected arguments: {argv[1:]}")
  model_dir = FLAGS.model_dir or tempfile.mkdtemp(prefix="estimator_compat_")
  try:
    return _train_and_evaluate(model_dir)
  except app.UsageError as e:
    return _usage_error(str(e))
  finally:
    if not FLAGS.model_dir:
      _remove_if_empty(model_dir)


def _usage_error(message: str) -> int:
  sys.stderr.write(f"{message}\nPass --helpfull to see every flag.\n")
  return 2


def _remove_if_empty(model_dir: str) -> None:
  """Removes our temporary model_dir if the run wrote nothing there."""
  try:
    os.rmdir(model_dir)
  except OSError:
    pass  # Not empty (something was trained: keep it) or already gone.


def _train_and_evaluate(model_dir: str) -> int:
  """train_and_evaluate with the flags' model, input and config."""
  if FLAGS.local_cluster:
    # Every task must share one model_dir.
    from estimator_compat.distribute import local_cluster  # pylint: disable=g-import-not-at-top
    command = list(sys.orig_argv)
    if not FLAGS.model_dir:
      command.append(f"--model_dir={model_dir}")
    print(f"model_dir: {os.path.abspath(model_dir)}")
    return local_cluster.launch(FLAGS.local_cluster, FLAGS.strategy, command)
  # Imported here so that --help works without loading TensorFlow.
  import estimator_compat as tfe  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  logging.set_verbosity(logging.INFO)
  if tf.get_logger().handlers:  # TF logs once, not again through absl's.
    tf.get_logger().propagate = False
  tfe.install()  # Legacy modules refer to tf.estimator.
  # This binary's strategy flags, handed to the front as a value.
  from estimator_compat.front import configuration  # pylint: disable=g-import-not-at-top
  configuration.set_strategy_flags(configuration.StrategyChoice(
      FLAGS.strategy, FLAGS.min_shard_bytes, FLAGS.max_shards))
  model_fn = load_callable(FLAGS.model_fn, "model_fn")
  train_input_fn = load_callable(FLAGS.input_fn, "input_fn")
  eval_input_fn = (load_callable(FLAGS.eval_input_fn, "eval_input_fn")
                   if FLAGS.eval_input_fn else train_input_fn)
  logging.info("model_dir: %s", model_dir)
  config = tfe.RunConfig(
      model_dir=model_dir, tf_random_seed=FLAGS.tf_random_seed,
      log_step_count_steps=FLAGS.log_step_count_steps, engine=FLAGS.engine,
      steps_per_loop=FLAGS.steps_per_loop, jit_compile=FLAGS.jit_compile,
      save_on_preemption=FLAGS.save_on_preemption,
      **({"save_checkpoints_steps": FLAGS.save_checkpoints_steps}
         if FLAGS.save_checkpoints_steps else {}))
  estimator = tfe.Estimator(model_fn, config=config,
                            params=json.loads(FLAGS.params))
  metrics, _ = tfe.train_and_evaluate(
      estimator,
      tfe.TrainSpec(train_input_fn, max_steps=FLAGS.train_steps),
      tfe.EvalSpec(eval_input_fn, steps=FLAGS.eval_steps,
                   throttle_secs=FLAGS.throttle_secs))
  if metrics is None:  # A worker, ps or evaluator task of a cluster.
    return 0
  summary = {key: float(value) for key, value in sorted(metrics.items())}
  print(f"model_dir: {os.path.abspath(model_dir)}")
  print("final evaluation: " + json.dumps(summary))
  return 0


def run():
  """Console-script entry point (estimator-compat-train)."""
  app.run(main)


if __name__ == "__main__":
  sys.exit(run())
