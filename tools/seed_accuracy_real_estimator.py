r"""The seed model's accuracy on the REAL Estimator: one process vs between-graph PS.

  python tools/seed_accuracy_real_estimator.py [--runs 10] [--python PY]

The reference for tools/seed_accuracy.py: the same model, data (seeded
numpy, random labels), batch size and 1000 steps, run on TF 2.15.1 +
tensorflow-estimator 2.15.0 (--python: that virtualenv's python, default
$GOLDEN_VENV/bin/python, as tools/record_goldens.sh makes it) --runs times in
one process and --runs times as a between-graph parameter-server cluster on
loopback (TF_CONFIG with chief + 1 worker + 1 ps, train_and_evaluate), then
prints each run's training accuracy and the means. The model_fn passes
global_step to minimize(): without it the real Estimator never finishes.
Run by hand (about 30 s per pair of runs); not a test.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PYTHON = os.path.join(
    os.environ.get("GOLDEN_VENV", os.path.expanduser(
        "~/.cache/estimator-compat/tf215-venv")), "bin", "python")


def _child(model_dir: str, what: str) -> None:
  """Runs in the TF 2.15 interpreter: trains, or prints the accuracy."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  sys.path.insert(0, ROOT)
  from tests import seed_runner  # pylint: disable=g-import-not-at-top

  def model_fn(features, labels, mode):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(128, activation="relu", input_shape=(10,)),
        tf.keras.layers.Dense(10)])
    logits = model(features["feature"])
    if mode == tf.estimator.ModeKeys.PREDICT:
      return tf.estimator.EstimatorSpec(mode, predictions=logits)
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
        labels, logits, from_logits=True))
    train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

  x, y = seed_runner.data()
  numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
  if what == "accuracy":
    estimator = tf.estimator.Estimator(model_fn, model_dir)
    logits = np.array(list(estimator.predict(numpy_input_fn(
        {"feature": x}, shuffle=False))))
    print("ACCURACY", float((logits.argmax(axis=1) == y).mean()))
    return
  estimator = tf.estimator.Estimator(model_fn, model_dir)
  train = numpy_input_fn({"feature": x}, y, num_epochs=None, shuffle=True)
  if what == "single":
    estimator.train(train, steps=1000)
  else:
    tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(train, max_steps=1000),
        tf.estimator.EvalSpec(numpy_input_fn({"feature": x}, y, num_epochs=1,
                                             shuffle=False), steps=1))


def _port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _start(python: str, model_dir: str, what: str, tf_config=None):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("TF_CONFIG", None)
  if tf_config:
    env["TF_CONFIG"] = json.dumps(tf_config)
  return subprocess.Popen([python, __file__, "--child", what, model_dir],
                          env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)


def _accuracy(python: str, model_dir: str) -> float:
  out, _ = _start(python, model_dir, "accuracy").communicate(timeout=300)
  return float(next(line for line in out.splitlines()
                    if line.startswith("ACCURACY")).split()[1])


def _single(python: str) -> float:
  model_dir = tempfile.mkdtemp(prefix="real_single_")
  process = _start(python, model_dir, "single")
  process.communicate(timeout=600)
  return _accuracy(python, model_dir)


def _cluster(python: str) -> float:
  model_dir = tempfile.mkdtemp(prefix="real_ps_")
  cluster = {role: [f"127.0.0.1:{_port()}"]
             for role in ("chief", "worker", "ps")}
  tasks = {role: _start(python, model_dir, "ps",
                        {"cluster": cluster,
                         "task": {"type": role, "index": 0}})
           for role in ("ps", "worker", "chief")}
  try:
    tasks["chief"].communicate(timeout=600)
    tasks["worker"].communicate(timeout=120)
  finally:
    for task in tasks.values():  # The ps serves forever.
      task.kill()
      task.wait()
  return _accuracy(python, model_dir)


def main() -> int:
  if len(sys.argv) == 4 and sys.argv[1] == "--child":
    _child(sys.argv[3], sys.argv[2])
    return 0
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--runs", type=int, default=10)
  parser.add_argument("--python", default=DEFAULT_PYTHON)
  args = parser.parse_args()
  results = {"single process": [], "between-graph PS, chief + 1 worker": []}
  for _ in range(args.runs):
    results["single process"].append(_single(args.python))
    results["between-graph PS, chief + 1 worker"].append(
        _cluster(args.python))
  single = statistics.mean(results["single process"])
  for name, values in results.items():
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    print(f"{name}: runs {[round(v, 3) for v in values]}, mean "
          f"{statistics.mean(values):.3f} (sd {spread:.3f}), vs single "
          f"{100 * (statistics.mean(values) - single):+.1f} points")
  return 0


if __name__ == "__main__":
  sys.exit(main())
