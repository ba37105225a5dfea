"""Steps/s of both engines, the real Estimator and a hand-written TF2 loop.

Same MLP (784-128-10, batch 256, Adam) everywhere; the function engine and
the hand-written loop at 1 and 50 steps per call.

  python benchmarks/engines.py [--steps 2000] [--repeats 3] \
      [--real_estimator_python ~/.cache/estimator-compat/tf215-venv/bin/python]

Times a whole `train(steps=N)` call after a warm-up call, as a user feels it,
and prints the median of several runs per engine. A speed goal lives here, not
in a timed test.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import estimator_compat as tfe  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

tfe.install()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charts  # pylint: disable=g-import-not-at-top,wrong-import-position
from mlp_model import input_fn, model_fn  # pylint: disable=g-import-not-at-top,wrong-import-position
from real_estimator import reference_env  # pylint: disable=g-import-not-at-top,wrong-import-position


def steps_per_second(engine: str, steps: int, steps_per_loop: int = 1
                    ) -> float:
  config = tfe.RunConfig(model_dir=tempfile.mkdtemp(), engine=engine,
                         save_checkpoints_steps=10 ** 9, save_summary_steps=0,
                         log_step_count_steps=10 ** 9,
                         steps_per_loop=steps_per_loop)
  estimator = tfe.Estimator(model_fn, config=config)
  estimator.train(input_fn, steps=10)  # warm-up
  start = time.perf_counter()
  estimator.train(input_fn, steps=steps)
  return steps / (time.perf_counter() - start)


def _handwritten_weights():
  init = tf.keras.initializers.GlorotUniform(seed=0)
  return [tf.Variable(init([784, 128])), tf.Variable(tf.zeros([128])),
          tf.Variable(init([128, 10])), tf.Variable(tf.zeros([10]))]


def _handwritten_loss(weights, features, labels):
  hidden = tf.nn.relu(features["x"] @ weights[0] + weights[1])
  logits = hidden @ weights[2] + weights[3]
  return tf.reduce_mean(
      tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))


def handwritten_steps_per_second(steps: int, steps_per_call: int,
                                 optimizer: str = "keras",
                                 clock=time.perf_counter) -> float:
  """The same model as plain TF2: tf.Variables, GradientTape, one tf.function.

  Args:
    steps: training steps timed.
    steps_per_call: steps per tf.function call (a tf.range loop inside).
    optimizer: "keras" (Keras Adam) or "v1" (the legacy program's own
      tf.compat.v1.train.AdamOptimizer, whose fused update does less work per
      step: the ceiling for that program).
    clock: what times the steps (time.process_time: CPU seconds, so
      steps per CPU second).
  """
  weights = _handwritten_weights()
  if optimizer == "v1":
    adam = tf.compat.v1.train.AdamOptimizer(1e-3)
  else:
    adam = tf.keras.optimizers.Adam(1e-3)
  iterator = iter(input_fn())

  @tf.function
  def train(n):
    for _ in tf.range(n):
      features, labels = next(iterator)
      with tf.GradientTape() as tape:
        loss = _handwritten_loss(weights, features, labels)
      adam.apply_gradients(zip(tape.gradient(loss, weights), weights))

  calls = max(1, steps // steps_per_call)
  n = tf.constant(steps_per_call)
  train(n)  # warm-up
  start = clock()
  for _ in range(calls):
    train(n)
  return calls * steps_per_call / (clock() - start)


def handwritten_eval_steps_per_second(steps: int) -> float:
  """Evaluation as plain TF2: the forward pass and a mean loss, all `steps`
  batches in one tf.function call (the ceiling of an evaluate() call)."""
  weights = _handwritten_weights()
  total, count = tf.Variable(0.0), tf.Variable(0.0)
  iterator = iter(input_fn())

  @tf.function
  def evaluate(n):
    for _ in tf.range(n):
      features, labels = next(iterator)
      total.assign_add(_handwritten_loss(weights, features, labels))
      count.assign_add(1.0)

  evaluate(tf.constant(10))  # warm-up
  start = time.perf_counter()
  evaluate(tf.constant(steps))
  return steps / (time.perf_counter() - start)


def _handwritten_predict(weights):
  """A fresh tf.function: every batch's logits, stacked."""

  @tf.function
  def predict(dataset):
    logits = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    for i, (features, _) in dataset.enumerate():
      hidden = tf.nn.relu(features["x"] @ weights[0] + weights[1])
      logits = logits.write(tf.cast(i, tf.int32),
                            hidden @ weights[2] + weights[3])
    return logits.stack()

  return predict


def _handwritten_predictions(batches: int,
                             hand_out: Callable[[Any], int]) -> float:
  """Items per second of plain TF2 prediction: all `batches` batches in one
  tf.function call (traced before the clock starts), the stacked logits
  then given to `hand_out`, which returns how many items it handed out."""
  predict = _handwritten_predict(_handwritten_weights())
  predict(input_fn().take(10))  # warm-up (the trace)
  dataset = input_fn().take(batches)
  start = time.perf_counter()
  items = hand_out(predict(dataset).numpy())
  return items / (time.perf_counter() - start)


def handwritten_predict_batches_per_second(batches: int) -> float:
  """Batches per second, each batch's logits kept and returned (the ceiling
  of a predict() call with yield_single_examples=False)."""

  def whole_batches(logits):
    assert len(logits) == batches
    return len(logits)

  return _handwritten_predictions(batches, whole_batches)


def handwritten_predict_examples_per_second(batches: int) -> float:
  """Examples per second, each example's logits handed out as a dict of its
  own, as a per-example generator hands them (the ceiling of a predict()
  call with yield_single_examples=True)."""

  def one_dict_per_example(logits):
    examples = 0
    for batch in logits:
      for row in batch:  # Each dict let go, as a consumed generator's.
        example = {"logits": row}
        examples += 1
    assert examples == batches * 256 and example["logits"].shape == (10,)
    return examples

  return _handwritten_predictions(batches, one_dict_per_example)


def handwritten_checkpoint(directory: str) -> str:
  """Writes the hand-written model's variables once; the whole-call
  ceilings below restore it (as each evaluate()/predict() call restores the
  latest checkpoint)."""
  return tf.train.Checkpoint(weights=_handwritten_weights()).save(
      os.path.join(directory, "ckpt"))


def handwritten_eval_whole_call_seconds(directory: str, steps: int) -> float:
  """Seconds of one hand-written TF2 evaluation CALL, doing what any
  evaluation of this program must do on each call (the Estimator's contract
  calls input_fn and model_fn per call): call input_fn, make the model's
  variables and trace a fresh tf.function over the batches, restore the
  latest checkpoint in `directory` (handwritten_checkpoint()), run `steps`
  batches, read the metrics and let the iterator go. The ceiling of a whole
  evaluate() call; handwritten_eval_steps_per_second() is the loop-only one.
  """
  start = time.perf_counter()
  dataset = input_fn().take(steps)
  weights = _handwritten_weights()
  tf.train.Checkpoint(weights=weights).restore(
      tf.train.latest_checkpoint(directory)).assert_consumed()
  total, count = tf.Variable(0.0), tf.Variable(0.0)

  # The iterator is made and destroyed inside the call (as in the
  # prediction ceilings): one made eagerly and captured by the function
  # would live on in the function's reference cycles, its teardown left to
  # a later gc.collect() outside the timing.
  @tf.function
  def evaluate(data):
    for features, labels in data:
      total.assign_add(_handwritten_loss(weights, features, labels))
      count.assign_add(1.0)

  evaluate(dataset)
  mean = float((total / count).numpy())
  del dataset, evaluate
  seconds = time.perf_counter() - start
  assert mean == mean  # pylint: disable=comparison-with-itself
  return seconds


def handwritten_train_whole_call_seconds(directory: str, steps: int
                                        ) -> Tuple[float, float]:
  """Wall and CPU seconds of one hand-written TF2 training CALL of `steps`
  steps with the program's own v1 Adam, doing what any train() call of this
  program must do (the Estimator's contract calls input_fn and model_fn per
  call and ends each call with a checkpoint): call input_fn, make the
  variables (weights, Adam's slots, a step counter) and trace a fresh
  tf.function over the steps, restore the latest checkpoint in `directory`
  (handwritten_checkpoint(), then this function's own saves), run the steps,
  save a checkpoint and let the iterator go. The ceiling of a whole train()
  call; handwritten_steps_per_second(..., "v1") is the loop-only one. Nothing
  the default RunConfig adds beyond that (summaries, step logging, the
  graph.pbtxt and .meta files) is in it: those count against us.
  """
  start, cpu = time.perf_counter(), time.process_time()
  dataset = input_fn().take(steps)
  weights = _handwritten_weights()
  adam = tf.compat.v1.train.AdamOptimizer(1e-3)
  step = tf.Variable(0, dtype=tf.int64)
  # Adam's slots made before the trace, as ours makes every variable
  # before its step function's: made inside the first trace, they would
  # make tf.function trace a second time.
  adam._create_slots(weights)  # pylint: disable=protected-access
  checkpoint = tf.train.Checkpoint(weights=weights, optimizer=adam, step=step)
  checkpoint.restore(tf.train.latest_checkpoint(directory))

  # The iterator is made and destroyed inside the call, as in the
  # evaluation ceiling.
  @tf.function
  def train(data):
    for features, labels in data:
      with tf.GradientTape() as tape:
        loss = _handwritten_loss(weights, features, labels)
      adam.apply_gradients(zip(tape.gradient(loss, weights), weights))
      step.assign_add(1)

  train(dataset)
  checkpoint.save(os.path.join(directory, "ckpt"))
  del dataset, train
  wall, cpu = time.perf_counter() - start, time.process_time() - cpu
  assert int(step.numpy()) >= steps
  return wall, cpu


def handwritten_predict_whole_call_seconds(directory: str, batches: int
                                          ) -> float:
  """Seconds of one hand-written TF2 prediction CALL of `batches` whole
  batches: input_fn, variables, a fresh tf.function traced, the latest
  checkpoint restored, every batch's logits written out and read back (the
  ceiling of a whole predict(yield_single_examples=False) call)."""
  start = time.perf_counter()
  dataset = input_fn().take(batches)
  weights = _handwritten_weights()
  tf.train.Checkpoint(weights=weights).restore(
      tf.train.latest_checkpoint(directory)).assert_consumed()
  predict = _handwritten_predict(weights)  # the loop-only ceiling's loop
  out = predict(dataset).numpy()
  del dataset, predict
  seconds = time.perf_counter() - start
  assert len(out) == batches
  return seconds


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=2000)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--real_estimator_python", default=None,
                      help="python of a TF 2.15 + tensorflow-estimator venv "
                      "(tools/record_goldens.sh makes one) to time the real "
                      "Estimator on the same model")
  parser.add_argument("--png", default=None,
                      help="also draw the table as bars here (needs "
                      "matplotlib: pip install -e .[bench])")
  args = parser.parse_args()
  print("| engine | steps/s (median) | runs |")
  print("|---|---|---|")
  results = {}
  if args.real_estimator_python:
    script = os.path.join(os.path.dirname(__file__), "real_estimator.py")
    out = subprocess.run(
        [args.real_estimator_python, script, str(args.steps),
         str(args.repeats)], capture_output=True, text=True, check=True,
        env=reference_env())
    runs = [float(r) for r in out.stdout.split()]
    results["real"] = statistics.median(runs)
    print(f"| real Estimator (TF 2.15), 1 step/call | {results['real']:.0f} | "
          f"{', '.join(f'{r:.0f}' for r in runs)} |")
  cases = {
      "graph engine": lambda: steps_per_second("graph", args.steps),
      "function engine, 1 step/call":
          lambda: steps_per_second("function", args.steps, 1),
      "function engine, 50 steps/call":
          lambda: steps_per_second("function", args.steps, 50),
      "hand-written TF2, 1 step/call":
          lambda: handwritten_steps_per_second(args.steps, 1),
      "hand-written TF2, 50 steps/call":
          lambda: handwritten_steps_per_second(args.steps, 50),
  }
  for name, case in cases.items():
    runs = [case() for _ in range(args.repeats)]
    results[name] = statistics.median(runs)
    print(f"| {name} | {results[name]:.0f} | "
          f"{', '.join(f'{r:.0f}' for r in runs)} |")

  def ratio(a, b):
    if a in results and b in results:
      print(f"- {a} / {b}: {results[a] / results[b]:.2f}")
  print()
  ratio("function engine, 1 step/call", "real")
  ratio("function engine, 50 steps/call", "real")
  ratio("function engine, 1 step/call", "hand-written TF2, 1 step/call")
  ratio("function engine, 50 steps/call", "hand-written TF2, 50 steps/call")
  ratio("function engine, 1 step/call", "graph engine")
  charts.maybe(charts.bars, {
      ("real Estimator (TF 2.15)" if name == "real" else name): value
      for name, value in results.items()}, path=args.png,
               title=f"Training steps/s per engine ({args.steps} steps)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
