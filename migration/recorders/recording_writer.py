"""Runs one side of a migration check and writes what it saw to a directory.

Only the public Estimator API is used, so the same code records on TF 2.15 +
tensorflow-estimator (a golden from the real Estimator) and on TF 2.21 +
estimator_compat (the graph or function engine, under any synchronous
strategy). A recording directory holds:

  recording.json   versions, runtime, settings, variable structure, per-step
                   loss, eval metrics, export signatures, errors per phase
  inputs.npz       the train/eval/predict batches this side's input_fns gave
  ckpt0/           model.ckpt-0 of a fresh initialization (the start point
                   of both sides when this side is "old")
  init.npz         every variable of that fresh initialization
  forward.npz      loss and predictions of step 1 at the start checkpoint
  gradients.npz    gradients of step 1 at the start checkpoint
  trajectory.npz   every variable after each training step ('<step>/<name>')
  final/           the checkpoint after the last step
  predictions.npz  predictions from the evaluation checkpoint
  served.npz       SavedModel outputs on fixed inputs (with a receiver)

Phases that start from a checkpoint (forward, gradients, trajectory) start
from `start_from`; evaluation, prediction and export read `evaluate_from`.
For the old side both are its own; the new side gets the old side's, so each
check compares one computation from the same numbers.
"""

import contextlib
import dataclasses
import glob
import json
import os
import shutil
import tempfile
import traceback
from typing import Any, Dict, Iterator, List, Optional

import numpy as np

from migration import batches as batches_lib
from migration import fed
from migration import instrument
from migration import program as program_lib
from migration.program import Program

PHASES = ("inputs", "init", "probe", "trajectory", "eval", "predict",
          "export")


def run_phase(meta: Dict[str, Any], name: str, run) -> None:
  """Runs one phase of a recording; an error is recorded in `meta`, not raised
  (the report names the phase that failed and why)."""
  try:
    run()
  except Exception as e:  # pylint: disable=broad-except
    meta["errors"][name] = f"{type(e).__name__}: {e}"
    meta.setdefault("tracebacks", {})[name] = traceback.format_exc()


@dataclasses.dataclass(frozen=True)
class Settings:
  """How much each side runs. Both sides of a check use the same settings.

  Attributes:
    steps: training steps of the trajectory (fewer if the input ends).
    seed: graph seed, and the seed of the model_fn's random ops.
    eval_batches: batches of evaluation input read for the eval check.
    predict_batches: batches of prediction input for predictions/SavedModel.
  """
  steps: int = 10
  seed: int = 42
  eval_batches: int = 10
  predict_batches: int = 2

  def __post_init__(self):
    for field in dataclasses.fields(self):
      value = getattr(self, field.name)
      if field.name != "seed" and (not isinstance(value, int) or value < 1):
        raise ValueError(f"{field.name} must be a positive integer, got "
                         f"{value!r}. Fix: e.g. --{field.name}=10.")


@dataclasses.dataclass(frozen=True)
class Runtime:
  """What runs a side: the real Estimator (engine None) or an engine here."""
  engine: Optional[str] = None
  strategy: Optional[str] = None

  def describe(self, tf_version: str) -> str:
    if self.engine is None:
      return f"tf.estimator on TensorFlow {tf_version}"
    return (f"estimator_compat {self.engine} engine, strategy "
            f"{self.strategy or 'default'}, TensorFlow {tf_version}")


def _tensorflow(runtime: Runtime):
  return program_lib.tensorflow_with_estimator(
      real_if_installed=runtime.engine is None)


@contextlib.contextmanager
def _strategy(runtime: Runtime, name: Optional[str]) -> Iterator[None]:
  """Sets estimator_compat's process strategy for one phase."""
  if runtime.engine is None:
    yield
    return
  from estimator_compat.front import configuration  # pylint: disable=g-import-not-at-top
  previous = configuration.process_strategy_name()
  configuration.set_process_strategy(name)
  try:
    yield
  finally:
    configuration.set_process_strategy(previous)


def _copy_checkpoint(checkpoint: str, directory: str) -> str:
  """Copies a checkpoint (prefix) into directory; returns the new prefix."""
  os.makedirs(directory, exist_ok=True)
  for path in glob.glob(checkpoint + ".*"):
    if not path.endswith(".meta"):
      shutil.copy(path, directory)
  name = os.path.basename(checkpoint)
  with open(os.path.join(directory, "checkpoint"), "w") as f:
    f.write(f'model_checkpoint_path: "{name}"\n'
            f'all_model_checkpoint_paths: "{name}"\n')
  return os.path.join(directory, name)


def read_checkpoint(tf, checkpoint: str) -> Dict[str, np.ndarray]:
  reader = tf.train.load_checkpoint(checkpoint)
  return {name: reader.get_tensor(name)
          for name in sorted(reader.get_variable_to_shape_map())}


def read_losses(tf, model_dir: str) -> List[List[float]]:
  """[step, loss] pairs from the 'loss' summaries of model_dir's events."""
  by_step = {}
  for path in sorted(glob.glob(os.path.join(model_dir,
                                            "events.out.tfevents.*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.tag == "loss":
          by_step[int(event.step)] = float(
              value.simple_value if value.HasField("simple_value") else
              tf.make_ndarray(value.tensor))
  return [[step, by_step[step]] for step in sorted(by_step)]


def stack_predictions(predictions: List[Any]) -> Dict[str, np.ndarray]:
  if not predictions:
    return {}
  if isinstance(predictions[0], dict):
    # MultiHead predictions are keyed by (head name, key) tuples.
    return {str(key): plain_array(np.stack([p[key] for p in predictions]))
            for key in predictions[0]}
  return {"predictions": plain_array(np.stack(predictions))}


def plain_array(array: np.ndarray) -> np.ndarray:
  """String predictions as a bytes array: np.load reads it without pickle."""
  return array.astype(np.bytes_) if array.dtype == object else array


def jsonable(value: Any) -> Any:
  if isinstance(value, dict):
    return {str(k): jsonable(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [jsonable(v) for v in value]
  if isinstance(value, (np.ndarray, np.generic)):
    return value.tolist()
  return value


def _example_bytes(tf, features: Dict[str, np.ndarray]) -> np.ndarray:
  """One serialized tf.Example per row of a features dict."""
  rows = len(next(iter(features.values())))
  serialized = []
  for i in range(rows):
    feature = {}
    for key, column in features.items():
      value = np.asarray(column[i]).reshape(-1)
      if value.dtype.kind == "f":
        feature[key] = tf.train.Feature(
            float_list=tf.train.FloatList(value=value.tolist()))
      elif value.dtype.kind in "iub":
        feature[key] = tf.train.Feature(
            int64_list=tf.train.Int64List(value=value.astype(int).tolist()))
      else:
        feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[bytes(v) if not isinstance(v, str) else v.encode()
                   for v in value]))
    serialized.append(tf.train.Example(
        features=tf.train.Features(feature=feature)).SerializeToString())
  return np.array(serialized, dtype=object)


def serving_inputs(tf, signature, features) -> Optional[Dict[str, Any]]:
  """Inputs for a signature from prediction features, or None.

  A raw receiver's inputs are named like features; a parsing receiver takes
  one string tensor of serialized tf.Examples, built here from the features.
  """
  specs = signature.structured_input_signature[1]
  if not isinstance(features, dict):
    features = {"feature": features}
  if set(specs) <= set(features):
    return {k: tf.constant(features[k], dtype=specs[k].dtype) for k in specs}
  if len(specs) == 1 and next(iter(specs.values())).dtype == tf.string:
    name = next(iter(specs))
    return {name: tf.constant(_example_bytes(tf, features))}
  return None


class _Recorder:
  """One side's run; each phase records what it saw or the error it hit."""

  def __init__(self, program: Program, out_dir: str, settings: Settings,
               runtime: Runtime):
    self.tf = _tensorflow(runtime)
    if runtime.engine is None and self.tf.estimator.Estimator.__module__ \
        .startswith("estimator_compat"):
      # No real Estimator here: say which of our engines recorded.
      from estimator_compat.front import configuration  # pylint: disable=g-import-not-at-top
      runtime = dataclasses.replace(runtime,
                                    engine=configuration.engine_name())
    self.program = program
    self.out = out_dir
    self.settings = settings
    self.runtime = runtime
    self.work = tempfile.mkdtemp(prefix="migration_")
    self.meta: Dict[str, Any] = {
        "tensorflow_version": self.tf.__version__,
        "runtime": runtime.describe(self.tf.__version__),
        "engine": runtime.engine, "strategy": runtime.strategy,
        "settings": dataclasses.asdict(settings),
        "program": dict(program.names), "errors": {}}
    self.batches: Dict[str, List[Any]] = {}

  def _estimator(self, model_dir: str, model_fn, **config):
    tf = self.tf
    kwargs = dict(tf_random_seed=self.settings.seed, **config)
    if self.runtime.engine is not None:
      kwargs["engine"] = self.runtime.engine
    extra = {} if self.program.params is None else {
        "params": self.program.params}
    return tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir,
                                  config=tf.estimator.RunConfig(**kwargs),
                                  **extra)

  def _replicas(self) -> int:
    """Replicas in sync under this side's strategy (1 without one)."""
    if self.runtime.engine is None or self.runtime.strategy is None:
      return 1
    from estimator_compat.distribute import strategies  # pylint: disable=g-import-not-at-top
    from estimator_compat.front import configuration  # pylint: disable=g-import-not-at-top
    with _strategy(self.runtime, self.runtime.strategy):
      config = self.tf.estimator.RunConfig()
      strategy = strategies.for_training(
          config, configuration.resolve(config).strategy)
    return strategy.num_replicas_in_sync if strategy is not None else 1

  def _model_dir(self, name: str, start: Optional[str] = None) -> str:
    path = os.path.join(self.work, name)
    if start:
      _copy_checkpoint(start, path)
    return path

  def phase(self, name: str, run) -> None:
    run_phase(self.meta, name, run)

  def read_inputs(self) -> None:
    p, s = self.program, self.settings
    with _strategy(self.runtime, None):
      self.batches = fed.record(
          self.tf, lambda name, model_fn: self._estimator(
              self._model_dir(name), model_fn),
          {"train": p.input_fn, "eval": p.eval_input_fn or p.input_fn,
           "predict": p.predict_input_fn or p.input_fn},
          {"train": s.steps, "eval": s.eval_batches,
           "predict": s.predict_batches})
    arrays = {}
    for name, value in self.batches.items():
      arrays.update(batches_lib.flatten(value, name))
    np.savez(os.path.join(self.out, "inputs.npz"), **arrays)

  def initialize(self) -> None:
    observed = {}
    model_dir = self._model_dir("init")
    estimator = self._estimator(model_dir, instrument.instrument(
        self.program.model_fn, self.settings.seed, observed))
    with _strategy(self.runtime, self.runtime.strategy):
      estimator.train(batches_lib.replay_input_fn(self.batches["train"][:1]),
                      steps=1)
    self.meta["structure"] = observed.get("structure", [])
    ckpt0 = os.path.join(model_dir, "model.ckpt-0")
    np.savez(os.path.join(self.out, "init.npz"),
             **read_checkpoint(self.tf, ckpt0))
    _copy_checkpoint(ckpt0, os.path.join(self.out, "ckpt0"))

  def probe(self, start: str) -> None:
    observed = {}
    estimator = self._estimator(
        self._model_dir("probe", start),
        instrument.instrument(self.program.model_fn, self.settings.seed,
                              observed, probe=True))
    with _strategy(self.runtime, None):
      estimator.train(batches_lib.replay_input_fn(self.batches["train"][:1]),
                      steps=1)
    if "loss" not in observed:
      raise RuntimeError("the probe hook fetched nothing in step 1")
    self.meta["unconnected"] = observed.pop("__unconnected__", [])
    observed.pop("structure", None)
    np.savez(os.path.join(self.out, "forward.npz"),
             **{k: v for k, v in observed.items()
                if not k.startswith("gradients/")})
    np.savez(os.path.join(self.out, "gradients.npz"),
             **{k[len("gradients/"):]: v for k, v in observed.items()
                if k.startswith("gradients/")})

  def trajectory(self, start: str) -> None:
    steps = len(self.batches["train"])
    model_dir = self._model_dir("train", start)
    estimator = self._estimator(
        model_dir, instrument.instrument(self.program.model_fn,
                                         self.settings.seed, {}),
        save_summary_steps=1, save_checkpoints_steps=1,
        save_checkpoints_secs=None, keep_checkpoint_max=steps + 2,
        log_step_count_steps=None)
    with _strategy(self.runtime, self.runtime.strategy):
      estimator.train(batches_lib.replay_input_fn(
          self.batches["train"], replicas=self._replicas()), steps=steps)
    per_step = {}
    for step in range(1, steps + 1):
      checkpoint = os.path.join(model_dir, f"model.ckpt-{step}")
      if glob.glob(checkpoint + ".index"):
        for name, value in read_checkpoint(self.tf, checkpoint).items():
          per_step[f"{step:05d}/{name}"] = value
    np.savez(os.path.join(self.out, "trajectory.npz"), **per_step)
    self.meta["losses"] = read_losses(self.tf, model_dir)
    final = estimator.latest_checkpoint()
    self.meta["final_step"] = int(final.rsplit("-", 1)[1])
    _copy_checkpoint(final, os.path.join(self.out, "final"))

  def evaluate(self, checkpoint: str) -> None:
    estimator = self._estimator(
        self._model_dir("eval"),
        instrument.instrument(self.program.model_fn, self.settings.seed, {}))
    with _strategy(self.runtime, self.runtime.strategy):
      metrics = estimator.evaluate(
          batches_lib.replay_input_fn(self.batches["eval"]),
          checkpoint_path=checkpoint)
    self.meta["eval_metrics"] = jsonable(metrics)

  def predict(self, checkpoint: str) -> None:
    estimator = self._estimator(
        self._model_dir("predict"),
        instrument.instrument(self.program.model_fn, self.settings.seed, {}))
    with _strategy(self.runtime, self.runtime.strategy):
      predictions = list(estimator.predict(
          batches_lib.replay_input_fn(self.batches["predict"],
                                      with_labels=False),
          checkpoint_path=checkpoint))
    np.savez(os.path.join(self.out, "predictions.npz"),
             **stack_predictions(predictions))

  def export(self, checkpoint: str) -> None:
    tf = self.tf
    estimator = self._estimator(
        self._model_dir("export_model"),
        instrument.instrument(self.program.model_fn, self.settings.seed, {}))
    path = estimator.export_saved_model(
        os.path.join(self.work, "export"),
        self.program.serving_input_receiver_fn, checkpoint_path=checkpoint)
    loaded = tf.saved_model.load(path.decode() if isinstance(path, bytes)
                                 else path)
    features = self.batches["predict"][0][0]
    signatures, served = {}, {}
    for key in sorted(loaded.signatures):
      signature = loaded.signatures[key]
      signatures[key] = {
          "inputs": sorted(signature.structured_input_signature[1]),
          "outputs": sorted(signature.structured_outputs)}
      inputs = serving_inputs(tf, signature, features)
      if inputs is not None:
        for name, value in signature(**inputs).items():
          served[f"{key}/{name}"] = value.numpy()
    self.meta["export"] = signatures
    np.savez(os.path.join(self.out, "served.npz"), **served)

  def finish(self) -> None:
    with open(os.path.join(self.out, "recording.json"), "w") as f:
      json.dump(self.meta, f, indent=1, sort_keys=True)
    shutil.rmtree(self.work, ignore_errors=True)


def record(program: Program, out_dir: str, settings: Settings = Settings(),
           runtime: Runtime = Runtime(), start_from: Optional[str] = None,
           evaluate_from: Optional[str] = None) -> str:
  """Runs one side and writes its recording to out_dir (see module doc).

  Args:
    program: the legacy program.
    out_dir: a new or empty directory; an existing recording there (a
      recording.json) is refused rather than overwritten.
    settings: steps, seed and input sizes.
    runtime: what runs it; Runtime() is the real Estimator when it is
      installed (TF <= 2.15), else estimator_compat's default engine.
    start_from: the checkpoint prefix forward, gradients and trajectory
      start from; None: this side's own fresh initialization (ckpt0/).
    evaluate_from: the checkpoint prefix evaluation, prediction and export
      read; None: this side's own final checkpoint.

  Returns:
    out_dir.
  """
  if os.path.exists(os.path.join(out_dir, "recording.json")):
    raise ValueError(f"{out_dir} already holds a recording. Fix: choose a "
                     "new --out directory or delete the old recording "
                     "first; it is never overwritten.")
  os.makedirs(out_dir, exist_ok=True)
  recorder = _Recorder(program, out_dir, settings, runtime)
  try:
    recorder.phase("inputs", recorder.read_inputs)
    if "inputs" not in recorder.meta["errors"]:
      recorder.phase("init", recorder.initialize)
      start = start_from or os.path.join(out_dir, "ckpt0", "model.ckpt-0")
      recorder.phase("probe", lambda: recorder.probe(start))
      recorder.phase("trajectory", lambda: recorder.trajectory(start))
      final = evaluate_from or os.path.join(
          out_dir, "final", f"model.ckpt-{recorder.meta.get('final_step')}")
      recorder.phase("eval", lambda: recorder.evaluate(final))
      recorder.phase("predict", lambda: recorder.predict(final))
      if program.serving_input_receiver_fn is not None:
        recorder.phase("export", lambda: recorder.export(final))
  finally:
    recorder.finish()
  return out_dir
