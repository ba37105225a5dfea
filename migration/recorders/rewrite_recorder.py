"""Records a TF2 rewrite as the new side of a migration check.

Writes the same recording directory as migration.recorders.recording_writer (see its
docstring), every value under its legacy name through a VariableMap, so
that every check in migration.checks compares the rewrite with the legacy
run as it compares two Estimator runs. The rewrite starts from the old
side's checkpoints (loaded through the map): forward, gradients and
trajectory from its model.ckpt-0, eval, predict and export from its final
checkpoint. Its fresh initialization cannot draw the legacy graph's random
numbers, so the initialization check compares the distributions of the
initial values (recording meta "initialization": "distribution").
"""

import json
import os
import shutil
import tempfile
from typing import Any, Dict, List, Optional

import numpy as np
import tensorflow as tf

from migration import batches as batches_lib
from migration.recorders import recording_writer as record_lib
from migration.program import Program
from migration.recorders.recording_reader import Recording
from migration.rewrite import Rewrite, Side
from migration.variable_map import VariableMap

RUNTIME = "TF2 rewrite"


def _dataset(program: Program, rewrite: Rewrite, mode: str,
             seed: int) -> tf.data.Dataset:
  if rewrite.input_fn is not None:
    return rewrite.input_fn(mode)
  import estimator_compat  # pylint: disable=g-import-not-at-top
  from estimator_compat import adapters  # pylint: disable=g-import-not-at-top
  input_fn = {"train": program.input_fn,
              "eval": program.eval_input_fn or program.input_fn,
              "infer": program.predict_input_fn or program.input_fn}[mode]
  return adapters.input_fn_to_dataset_fn(
      input_fn, mode, params=program.params,
      config=estimator_compat.RunConfig(tf_random_seed=seed))()


def _numpy(value: Any) -> Any:
  return None if value is None else tf.nest.map_structure(np.asarray, value)


def _take(dataset: tf.data.Dataset, count: int, labels: bool) -> List[Any]:
  out = []
  for element in dataset.take(count):
    if isinstance(element, tuple) and len(element) == 2:
      features, label = element
    else:
      features, label = element, None
    out.append((_numpy(features), _numpy(label) if labels else None))
  return out


def _flat_predictions(predictions: Any) -> Dict[str, np.ndarray]:
  if isinstance(predictions, dict):
    return {f"predictions/{k}": np.asarray(v) for k, v in predictions.items()}
  return {"predictions": np.asarray(predictions)}


def _write_checkpoint(values: Dict[str, np.ndarray], prefix: str) -> None:
  """A name-based checkpoint of legacy-named values (the final/ dir)."""
  os.makedirs(os.path.dirname(prefix), exist_ok=True)
  with tf.Graph().as_default():
    variables = {name: tf.compat.v1.Variable(value, name=name.replace(
        "/", "_")) for name, value in values.items()}
    saver = tf.compat.v1.train.Saver(variables)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      saver.save(session, prefix, write_meta_graph=False)


class _Recorder:
  """The rewrite's run; each phase records what it saw or its error."""

  def __init__(self, program: Program, rewrite: Rewrite, old: Recording,
               out: str, settings: record_lib.Settings):
    self.program, self.rewrite, self.old = program, rewrite, old
    self.out, self.settings = out, settings
    self.meta: Dict[str, Any] = {
        "tensorflow_version": tf.__version__,
        "runtime": f"{RUNTIME} on TensorFlow {tf.__version__}",
        "engine": None, "strategy": None,
        "settings": {"steps": settings.steps, "seed": settings.seed,
                     "eval_batches": settings.eval_batches,
                     "predict_batches": settings.predict_batches},
        "program": dict(program.names), "errors": {},
        "initialization": "distribution"}
    self.batches: Dict[str, List[Any]] = {}
    self.side: Optional[Side] = None
    self.map: Optional[VariableMap] = None

  def phase(self, name: str, run) -> None:
    record_lib.run_phase(self.meta, name, run)

  def read_inputs(self) -> None:
    s, seed = self.settings, self.settings.seed
    self.batches = {
        "train": _take(_dataset(self.program, self.rewrite, "train", seed),
                       s.steps, True),
        "eval": _take(_dataset(self.program, self.rewrite, "eval", seed),
                      s.eval_batches, True),
        "predict": _take(_dataset(self.program, self.rewrite, "infer", seed),
                         s.predict_batches, False)}
    arrays = {}
    for name, value in self.batches.items():
      arrays.update(batches_lib.flatten(value, name))
    np.savez(os.path.join(self.out, "inputs.npz"), **arrays)

  def initialize(self) -> None:
    tf.keras.utils.set_random_seed(self.settings.seed)
    self.side = Side(self.rewrite, self.batches["train"][0][0])
    self.map = VariableMap(self.old.meta.get("structure", []),
                           self.side.variables, self.side.optimizer,
                           self.rewrite.variable_map)
    self.meta["structure"] = self.map.structure()
    if self.side.optimizer is not None:
      self.meta["optimizer"] = self.side.optimizer.get_config()
    self.meta["variable_map"] = {
        name: variable.name for name, variable in self.map.model.items()}
    np.savez(os.path.join(self.out, "init.npz"), **self.map.values())

  def probe(self, start: str) -> None:
    self.map.load(start)
    features, labels = self.batches["train"][0]
    loss, predictions, gradients, variables = self.side.forward(features,
                                                                labels)
    forward = {"loss": np.asarray(loss)}
    forward.update(_flat_predictions(_numpy(predictions)))
    np.savez(os.path.join(self.out, "forward.npz"), **forward)
    np.savez(os.path.join(self.out, "gradients.npz"),
             **self.map.gradients_by_name(gradients, variables))

  def trajectory(self, start: str) -> None:
    self.map.load(start)
    per_step, losses = {}, []
    for step, (features, labels) in enumerate(self.batches["train"], 1):
      losses.append([step, self.side.train_step(features, labels)])
      for name, value in self.map.values().items():
        per_step[f"{step:05d}/{name}"] = value
    np.savez(os.path.join(self.out, "trajectory.npz"), **per_step)
    self.meta["losses"] = losses
    self.meta["final_step"] = len(losses)
    _write_checkpoint(self.map.values(), os.path.join(
        self.out, "final", f"model.ckpt-{len(losses)}"))

  def evaluate(self, checkpoint: str) -> None:
    self.map.load(checkpoint)
    metrics = self.side.evaluate(self.batches["eval"])
    values = self.map.values()
    if "global_step" in values:
      metrics["global_step"] = int(values["global_step"])
    self.meta["eval_metrics"] = metrics

  def predict(self, checkpoint: str) -> None:
    self.map.load(checkpoint)
    predictions = self.side.predict([f for f, _ in self.batches["predict"]])
    np.savez(os.path.join(self.out, "predictions.npz"), **predictions)

  def export(self, checkpoint: str) -> None:
    self.map.load(checkpoint)
    function = self.side.serving_function()
    module = tf.Module()
    module.model = self.side.model or tf.Module()
    module.serve = function
    path = tempfile.mkdtemp(prefix="migration_rewrite_export_")
    try:
      tf.saved_model.save(module, path,
                          signatures={"serving_default": function})
      loaded = tf.saved_model.load(path)
      features = self.batches["predict"][0][0]
      signatures, served = {}, {}
      for key in sorted(loaded.signatures):
        signature = loaded.signatures[key]
        signatures[key] = {
            "inputs": sorted(signature.structured_input_signature[1]),
            "outputs": sorted(signature.structured_outputs)}
        inputs = record_lib.serving_inputs(tf, signature, features)
        if inputs is not None:
          for name, value in signature(**inputs).items():
            served[f"{key}/{name}"] = value.numpy()
    finally:
      shutil.rmtree(path, ignore_errors=True)
    self.meta["export"] = signatures
    np.savez(os.path.join(self.out, "served.npz"), **served)

  def finish(self) -> None:
    with open(os.path.join(self.out, "recording.json"), "w") as f:
      json.dump(record_lib.jsonable(self.meta), f, indent=1, sort_keys=True)


def record(program: Program, rewrite: Rewrite, old: Recording, out_dir: str,
           settings: record_lib.Settings) -> str:
  """Runs the rewrite as the new side; writes its recording to out_dir."""
  if os.path.exists(os.path.join(out_dir, "recording.json")):
    raise ValueError(f"{out_dir} already holds a recording. Fix: choose a "
                     "new directory; recordings are never overwritten.")
  os.makedirs(out_dir, exist_ok=True)
  recorder = _Recorder(program, rewrite, old, out_dir, settings)
  try:
    recorder.phase("inputs", recorder.read_inputs)
    if "inputs" not in recorder.meta["errors"]:
      recorder.phase("init", recorder.initialize)
      if "init" in recorder.meta["errors"]:
        for phase in ("probe", "trajectory", "eval", "predict"):
          recorder.meta["errors"][phase] = recorder.meta["errors"]["init"]
      else:
        start = old.start_checkpoint()
        recorder.phase("probe", lambda: recorder.probe(start))
        recorder.phase("trajectory", lambda: recorder.trajectory(start))
        final = old.final_checkpoint() or os.path.join(
            out_dir, "final", f"model.ckpt-{recorder.meta.get('final_step')}")
        recorder.phase("eval", lambda: recorder.evaluate(final))
        recorder.phase("predict", lambda: recorder.predict(final))
        if old.meta.get("export") is not None or (
            program.serving_input_receiver_fn is not None):
          recorder.phase("export", lambda: recorder.export(final))
  finally:
    recorder.finish()
  return out_dir
