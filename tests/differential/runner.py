"""Runs a batch of generated programs in one interpreter, and collects facts.

One process per side runs many programs (TensorFlow's import alone takes
~5 s). It runs under TF 2.15 with the real tensorflow-estimator (`--side
old`) or under TF 2.21 after `estimator_compat.install()` (`--side new`);
it imports only the standard library, numpy and TensorFlow besides that.

  python -m tests.differential.runner --side old|new --batch BATCH.json

BATCH.json: {"items": [{"seed", "program", "workdir", "start_from",
"save_ckpt0_to"}, ...]}. For each item the runner copies `start_from` (a
ckpt-0 folder) into WORKDIR/model, runs the program as `__main__` with
argv [program, WORKDIR], copies WORKDIR/model's model.ckpt-0 to
`save_ckpt0_to` as the real Estimator saves it (when asked), and writes WORKDIR.facts.json (the program's
results.json, the error it raised, and for each model_dir: layout,
checkpoint list, variables, event scalars) and WORKDIR.vars.npz (variable
values). One line per finished item goes to stdout as `DONE <seed>`.
"""

import argparse
import glob
import json
import os
import re
import runpy
import shutil
import sys
import time
import traceback

MODEL_DIRS = ("model", "model_ws")
# Summaries whose values are wall-clock speeds: only their steps compare.
SPEED_TAGS = ("global_step/sec", "examples/sec")


# Where the running item's first checkpoint goes: {"model_dir", "dest"}.
_CKPT0 = {}


def _copy_first_checkpoints(tf) -> None:
  """Wraps Saver.save to copy WORKDIR/model's model.ckpt-0 when it is saved.

  Copying after the program ends is too late: keep_checkpoint_max may have
  deleted it by then (as migration's run-both does on its old side).
  """
  del tf
  from tensorflow.python.training import saver as saver_lib  # pylint: disable=g-import-not-at-top
  save = saver_lib.Saver.save

  def copying_save(self, sess, save_path, *args, **kwargs):
    path = save(self, sess, save_path, *args, **kwargs)
    path = path.decode() if isinstance(path, bytes) else path
    if (path and _CKPT0 and os.path.abspath(path) == os.path.join(
        _CKPT0["model_dir"], "model.ckpt-0")
        and not os.path.exists(_CKPT0["dest"])):
      _copy_ckpt0(_CKPT0["model_dir"], _CKPT0["dest"])
    return path

  saver_lib.Saver.save = copying_save


def _tensorflow(side: str):
  if side == "new":
    import estimator_compat  # pylint: disable=g-import-not-at-top
    estimator_compat.install()
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.get_logger().setLevel("ERROR")
  cpus = tf.config.list_physical_devices("CPU")
  # MirroredStrategy programs ask for two logical CPUs; the runtime starts
  # once per process, so every program of the batch gets them.
  tf.config.set_logical_device_configuration(
      cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
  if side == "old":
    _copy_first_checkpoints(tf)
  return tf


def _layout(model_dir: str):
  names = set()
  for path in glob.glob(os.path.join(model_dir, "**", "*"), recursive=True):
    if os.path.isdir(path):
      continue
    name = os.path.relpath(path, model_dir)
    name = re.sub(r"events\.out\.tfevents\..*", "events.out.tfevents.*", name)
    name = re.sub(r"(^|/)\d{10}(/|$)", r"\1<timestamp>\2", name)
    names.add(name)
  return sorted(names)


def _checkpoints(tf, model_dir: str):
  state = tf.train.get_checkpoint_state(model_dir)
  if state is None:
    return None
  return {"latest": os.path.basename(state.model_checkpoint_path),
          "all": [os.path.basename(p)
                  for p in state.all_model_checkpoint_paths]}


def _variables(tf, model_dir: str, values: dict):
  checkpoint = tf.train.latest_checkpoint(model_dir)
  if checkpoint is None:
    return {}
  reader = tf.train.load_checkpoint(checkpoint)
  dtypes = reader.get_variable_to_dtype_map()
  described = {}
  for name, shape in sorted(reader.get_variable_to_shape_map().items()):
    described[name] = {"shape": list(shape), "dtype": dtypes[name].name}
    if name != "_CHECKPOINTABLE_OBJECT_GRAPH":
      values[f"{os.path.basename(model_dir)}/{name}"] = reader.get_tensor(name)
  return described


def _events(tf, model_dir: str):
  """{folder: {tag: [[step, value or None], ...]}} of scalar summaries."""
  found = {}
  for path in sorted(glob.glob(os.path.join(model_dir, "**",
                                            "events.out.tfevents.*"),
                               recursive=True)):
    folder = os.path.relpath(os.path.dirname(path), model_dir)
    tags = found.setdefault(folder, {})
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.HasField("simple_value"):
          number = float(value.simple_value)
        elif value.HasField("tensor"):
          array = tf.make_ndarray(value.tensor)
          if array.size != 1 or array.dtype.kind not in "fiu":
            continue
          number = float(array.reshape(()))
        else:
          continue
        if value.tag in SPEED_TAGS:
          number = None
        tags.setdefault(value.tag, []).append([int(event.step), number])
  for tags in found.values():
    for points in tags.values():
      points.sort(key=lambda p: p[0])
  return found


def _reset(tf):
  tf.compat.v1.reset_default_graph()
  tf.keras.backend.clear_session()
  tf.compat.v1.summary.FileWriterCache.clear()


def _copy_ckpt0(model_dir: str, destination: str) -> bool:
  files = [p for p in glob.glob(os.path.join(model_dir, "model.ckpt-0.*"))
           if not p.endswith(".meta")]
  if not files:
    return False
  os.makedirs(destination, exist_ok=True)
  for path in files:
    shutil.copy(path, destination)
  with open(os.path.join(destination, "checkpoint"), "w") as f:
    f.write('model_checkpoint_path: "model.ckpt-0"\n'
            'all_model_checkpoint_paths: "model.ckpt-0"\n')
  return True


def run_item(tf, item: dict) -> None:
  """Runs one program and writes its facts next to its workdir."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  workdir = item["workdir"]
  # Facts of an earlier run must not outlive its workdir: a run killed
  # midway would leave them beside a half-written model_dir, which the
  # resumed sweep then compared (seed 17's "non-deterministic" rerun).
  for stale in (workdir + ".facts.json", workdir + ".vars.npz"):
    if os.path.exists(stale):
      os.remove(stale)
  shutil.rmtree(workdir, ignore_errors=True)
  os.makedirs(workdir)
  if item.get("start_from"):
    model_dir = os.path.join(workdir, "model")
    os.makedirs(model_dir)
    for path in glob.glob(os.path.join(item["start_from"], "*")):
      shutil.copy(path, model_dir)
  _reset(tf)
  _CKPT0.clear()
  if item.get("save_ckpt0_to"):
    shutil.rmtree(item["save_ckpt0_to"], ignore_errors=True)
    _CKPT0.update(model_dir=os.path.abspath(os.path.join(workdir, "model")),
                  dest=item["save_ckpt0_to"])
  error = None
  start = time.time()
  argv = sys.argv
  sys.argv = [item["program"], workdir]
  try:
    runpy.run_path(item["program"], run_name="__main__")
  except BaseException as e:  # pylint: disable=broad-except
    if isinstance(e, KeyboardInterrupt):
      raise
    error = {"type": type(e).__name__,
             "message": str(e).strip().splitlines()[0][:300] if str(e) else "",
             "traceback": traceback.format_exc()[-3000:]}
  finally:
    sys.argv = argv
  seconds = time.time() - start
  _reset(tf)
  _CKPT0.clear()
  results_path = os.path.join(workdir, "results.json")
  results = {}
  if os.path.exists(results_path):
    with open(results_path) as f:
      results = json.load(f)
  values = {}
  dirs = {}
  for name in MODEL_DIRS:
    model_dir = os.path.join(workdir, name)
    if os.path.isdir(model_dir):
      dirs[name] = {"layout": _layout(model_dir),
                    "checkpoints": _checkpoints(tf, model_dir),
                    "variables": _variables(tf, model_dir, values),
                    "events": _events(tf, model_dir)}
  facts = {"seed": item["seed"], "tensorflow": tf.__version__,
           "error": error, "results": results, "model_dirs": dirs,
           "seconds": round(seconds, 2)}
  with open(workdir + ".facts.json", "w") as f:
    json.dump(facts, f, sort_keys=True)
  np.savez(workdir + ".vars.npz", **values)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--side", choices=("old", "new"), required=True)
  parser.add_argument("--batch", required=True)
  args = parser.parse_args(argv)
  with open(args.batch) as f:
    items = json.load(f)["items"]
  tf = _tensorflow(args.side)
  for item in items:
    run_item(tf, item)
    print(f"DONE {item['seed']}", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
