"""Records, or replays, a legacy program's results with the public Estimator API.

The same code runs on TF 2.15 + tensorflow-estimator (to record goldens) and on
TF 2.21 + estimator_compat (to replay them), so both sides do exactly the
same calls. A golden directory holds:

  ckpt0/           model.ckpt-0 the recorded run started from (+ `checkpoint`)
  served.npz       outputs of the exported SavedModel on fixed inputs (if the
                   program has a serving_input_receiver_fn)
  results.json     model_dir layout, variable names/shapes, eval metrics,
                   hook observations, TensorFlow version
  variables.npz    final variable values
  predictions.npz  predictions on fixed inputs, stacked per key

Usage (recording; see tools/record_goldens.sh):
  python -m migration.recorders.golden_recorder --program mlp --out tests/goldens/mlp
"""

import argparse
import glob
import importlib
import json
import os
import re
import shutil
import sys
import tempfile
from typing import Any, Dict, Optional

import numpy as np

from migration import program as program_lib
from migration.recorders import recording_writer as record_lib

PROGRAM_PACKAGE = "tests.golden_programs"


def _layout(model_dir: str):
  names = []
  for path in sorted(glob.glob(os.path.join(model_dir, "**", "*"),
                               recursive=True)):
    if os.path.isdir(path):
      continue
    name = os.path.relpath(path, model_dir)
    names.append(re.sub(r"events\.out\.tfevents\..*", "events.out.tfevents.*",
                        name))
  return sorted(set(names))


def build_estimator(tf, program, model_dir: str):
  """The program's Estimator in `model_dir`.

  A program that is not a custom model_fn (a canned estimator, a
  TPUEstimator, a converted Keras model) defines
  `build_estimator(tf, model_dir)`; otherwise it defines `model_fn`, `CONFIG`
  (RunConfig arguments) and `PARAMS`. A program may also define
  `run_training(tf, estimator)` to train its own way (train_and_evaluate, or
  hooks built from the Estimator) instead of one train() call.
  """
  if hasattr(program, "build_estimator"):
    return program.build_estimator(tf, model_dir)
  return tf.estimator.Estimator(
      model_fn=program.model_fn, model_dir=model_dir,
      config=tf.estimator.RunConfig(**program.CONFIG), params=program.PARAMS)


def _read_variables(tf, estimator, checkpoint: str, left_out=()):
  """The checkpoint's variable values and the shapes of all its variables.

  Variables whose name starts with one of `left_out` get a shape but no
  value (a program's `VALUES_LEFT_OUT`, e.g. a hash table's buckets).

  A TF1 optimizer's slot of a partitioned variable is saved as one slice of
  a full-size tensor per partition (`.../weights/part_1/Ftrl`), which
  `get_variable_value` cannot read, on the real Estimator as here: such
  variables get a shape but no value.
  """
  shapes = {name: list(shape)
            for name, shape in tf.train.list_variables(checkpoint)}
  values = {}
  for name in estimator.get_variable_names():
    if name.startswith(tuple(left_out)):
      continue
    try:
      values[name] = estimator.get_variable_value(name)
    except ValueError:
      if "/part_" not in name:
        raise
  return values, dict(sorted(shapes.items()))


def run_program(name: str, model_dir: str,
                start_checkpoint_dir: Optional[str] = None) -> Dict[str, Any]:
  """Trains, evaluates and predicts with program `name` in `model_dir`.

  Args:
    name: module name under tests/golden_programs.
    model_dir: an empty or missing directory.
    start_checkpoint_dir: a golden's ckpt0/ to start from (replay), or None
      to start from a fresh initialization (record).

  Returns:
    dict with 'results' (JSON-able), 'variables' and 'predictions' (arrays).
  """
  tf = program_lib.tensorflow_with_estimator()
  program = importlib.import_module(f"{PROGRAM_PACKAGE}.{name}")
  if hasattr(program, "reset"):
    program.reset()
  if start_checkpoint_dir:
    os.makedirs(model_dir, exist_ok=True)
    for path in glob.glob(os.path.join(start_checkpoint_dir, "*")):
      shutil.copy(path, model_dir)
  estimator = build_estimator(tf, program, model_dir)
  hooks = program.train_hooks() if hasattr(program, "train_hooks") else None
  listeners = (program.saving_listeners()
               if hasattr(program, "saving_listeners") else None)
  if hasattr(program, "run_training"):
    # Programs whose training is not one train() call (train_and_evaluate,
    # hooks that need the Estimator) run it themselves.
    program.run_training(tf, estimator)
  else:
    estimator.train(program.train_input_fn, hooks=hooks,
                    steps=program.TRAIN_STEPS, saving_listeners=listeners)
  checkpoint = estimator.latest_checkpoint()
  variables, shapes = _read_variables(
      tf, estimator, checkpoint, getattr(program, "VALUES_LEFT_OUT", ()))
  metrics = estimator.evaluate(program.eval_input_fn)
  predictions = list(estimator.predict(program.predict_input_fn))
  export, served = {}, {}
  if hasattr(program, "serving_input_receiver_fn"):
    export, served = _export_and_serve(tf, estimator, program)
  results = {
      "tensorflow_version": tf.__version__,
      "model_dir_layout": _layout(model_dir),
      "latest_checkpoint": os.path.basename(checkpoint),
      "variables": shapes,
      "eval_metrics": record_lib.jsonable(metrics),
      "observations": record_lib.jsonable(program.observations()
                                if hasattr(program, "observations") else {}),
      "export": export,
  }
  return {"results": results, "variables": variables,
          "predictions": record_lib.stack_predictions(predictions),
          "served": served}


def _export_and_serve(tf, estimator, program):
  """Exports a SavedModel, loads it with TF2, serves program.serving_inputs."""
  path = estimator.export_saved_model(tempfile.mkdtemp(prefix="export_"),
                                      program.serving_input_receiver_fn)
  loaded = tf.saved_model.load(path.decode() if isinstance(path, bytes)
                               else path)
  structure, served = {}, {}
  inputs = {k: tf.constant(v) for k, v in program.serving_inputs().items()}
  for key in sorted(loaded.signatures):
    signature = loaded.signatures[key]
    input_names = sorted(signature.structured_input_signature[1])
    structure[key] = {"inputs": input_names,
                      "outputs": sorted(signature.structured_outputs)}
    if input_names == sorted(inputs):
      for name, value in signature(**inputs).items():
        served[f"{key}/{name}"] = record_lib.plain_array(value.numpy())
  structure["path_is_bytes"] = isinstance(path, bytes)
  return structure, served


def train_in(name: str, model_dir: str, steps: int) -> int:
  """Trains program `name` `steps` more steps in model_dir; returns the step.

  Used to show that a model_dir moves between the real Estimator and this one
  (tools/cross_resume_check.sh).
  """
  tf = program_lib.tensorflow_with_estimator()
  program = importlib.import_module(f"{PROGRAM_PACKAGE}.{name}")
  estimator = build_estimator(tf, program, model_dir)
  estimator.train(program.train_input_fn, steps=steps)
  return int(estimator.get_variable_value("global_step"))


def record(name: str, out_dir: str) -> None:
  """Runs program `name` from scratch and writes its golden to `out_dir`."""
  model_dir = tempfile.mkdtemp(prefix=f"golden_{name}_")
  run = run_program(name, model_dir)
  if os.path.exists(out_dir):
    shutil.rmtree(out_dir)
  ckpt0 = os.path.join(out_dir, "ckpt0")
  os.makedirs(ckpt0)
  for path in glob.glob(os.path.join(model_dir, "model.ckpt-0.*")):
    if not path.endswith(".meta"):
      shutil.copy(path, ckpt0)
  with open(os.path.join(ckpt0, "checkpoint"), "w") as f:
    f.write('model_checkpoint_path: "model.ckpt-0"\n'
            'all_model_checkpoint_paths: "model.ckpt-0"\n')
  with open(os.path.join(out_dir, "results.json"), "w") as f:
    json.dump(run["results"], f, indent=1, sort_keys=True)
  np.savez(os.path.join(out_dir, "variables.npz"), **run["variables"])
  np.savez(os.path.join(out_dir, "predictions.npz"), **run["predictions"])
  if run["served"]:
    np.savez(os.path.join(out_dir, "served.npz"), **run["served"])
  shutil.rmtree(model_dir)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--program", required=True,
                      help="module name under tests/golden_programs")
  parser.add_argument("--out", help="golden directory to write")
  parser.add_argument("--train_in", help="instead: train more in this "
                      "model_dir and print the global step reached")
  parser.add_argument("--steps", type=int, default=10)
  args = parser.parse_args(argv)
  if args.train_in:
    step = train_in(args.program, args.train_in, args.steps)
    print(f"global_step={step}")
    return 0
  if not args.out:
    parser.error("--out or --train_in is required")
  record(args.program, args.out)
  print(f"recorded {args.program} -> {args.out}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
