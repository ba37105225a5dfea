"""The files of checkpoints in a model_dir: whole or not, kept, left over.

A checkpoint `model.ckpt-N` is whole when its `.index` file and every
`.data-NNNNN-of-MMMMM` shard exist. The `checkpoint` state file names the
newest one and the ones kept under `keep_checkpoint_max`. These helpers let
every mode refuse a checkpoint that the state file names but that is not
whole (instead of silently starting over or evaluating an untrained model),
let a new training process recover the kept list, and remove what a killed
save left behind.
"""

import os
import posixpath
import re
from typing import Callable, List, Optional, TypeVar

import numpy as np
import tensorflow as tf
from google.protobuf import text_format
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.training.checkpoint_state_pb2 import CheckpointState

from estimator_compat.front import tf_logging as logging

STATE_FILE = "checkpoint"
_T = TypeVar("_T")
_SHARD = re.compile(r"\.data-(\d{5})-of-(\d{5})$")
_STEP = re.compile(r"-(\d+)$")
# A TF1 optimizer's slot of one partition (`.../weights/part_1/Ftrl`, or
# `.../embedding_weights/t_1/Adagrad` as TF 2.15's v1 canned DNN named
# them) is saved as a slice of a full-size tensor: the index's shape is not
# what the data holds, so it does not count towards the expected size.
_PARTITION_SLOT = re.compile(r"/(part|t)_\d+/")
# Leftovers of an unfinished save, by what writes them: TensorFlow's bundle
# writer (`<file>.tempstate<random>`, renamed when done), its atomic text
# writer (`checkpoint.tmp<uuid>`, `graph.pbtxt.tmp<uuid>`, and
# `model.ckpt-N.meta.tmp<uuid>` of a meta graph a full disk cut short), and
# the sharded Saver (`<prefix>_temp/` holding `part-*` files, merged and
# removed when done).
_TEMPSTATE = re.compile(
    r"^.+\.(index|data-\d{5}-of-\d{5})\.tempstate\d+$")
_STATE_TMP = re.compile(
    r"^(checkpoint|graph\.pbtxt|.+-\d+\.meta)\.tmp[0-9a-f]{32}$")
_TEMP_DIR = re.compile(r"^.+-\d+(\.resave)?_temp(_[0-9a-f]{32})?$")
# A save over an existing checkpoint stages it as `<prefix>.resave`
# (replacing_saver.py); a kill before its files were renamed over leaves them.
_RESAVE = re.compile(r"^.+-\d+\.resave\.(index|data-\d{5}-of-\d{5})$")
_TEMP_PART = re.compile(
    r"^part-\d{5}-of-\d{5}(\.index|\.data-\d{5}-of-\d{5})(\.tempstate\d+)?$")


class BrokenCheckpointError(ValueError):
  """A checkpoint that should be used lacks some of its files.

  A ValueError, as the Estimator raised for a checkpoint state file that
  names a checkpoint that is not there.

  Attributes:
    path: the checkpoint prefix.
    missing: the files it lacks.
  """

  def __init__(self, message: str, path: str, missing: List[str]):
    super().__init__(message)
    self.path = path
    self.missing = missing


def check_model_dir(model_dir: str) -> None:
  """Raises ValueError, with the fix, when model_dir is a file."""
  if tf.io.gfile.exists(model_dir) and not tf.io.gfile.isdir(model_dir):
    raise ValueError(
        f"model_dir {model_dir!r} is a file, not a directory. Fix: pass the "
        "directory that holds (or will hold) the checkpoints, or move the "
        "file away.")


def read_state(model_dir: str) -> Optional[CheckpointState]:
  """The `checkpoint` state file of model_dir, paths made absolute.

  Returns:
    The state, or None when model_dir has no state file.

  Raises:
    ValueError: model_dir is a file, or its state file cannot be parsed
      (names the file and the fix).
  """
  if not model_dir:
    return None
  check_model_dir(model_dir)
  path = os.path.join(model_dir, STATE_FILE)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path, "rb") as f:
    content = f.read()
  state = CheckpointState()
  try:
    text_format.Merge(content.decode("utf-8"), state)
  except (UnicodeDecodeError, text_format.ParseError) as e:
    raise ValueError(
        f"The checkpoint state file {path} is corrupt (not a text "
        f"CheckpointState: {str(e)[:120]}). Nothing was changed on disk. "
        "Fix: restore it from a backup, or write a new one that names a "
        "whole checkpoint, e.g. tf.compat.v1.train.update_checkpoint_state("
        f"{model_dir!r}, 'model.ckpt-N'); whole checkpoints here: "
        f"{_names(whole_checkpoints(model_dir))}.") from e
  if not state.model_checkpoint_path:
    raise ValueError(
        f"Invalid checkpoint state loaded from {model_dir}: the state file "
        f"{path} names no checkpoint (it is empty, or lacks "
        "model_checkpoint_path), so the trained model cannot be found. "
        f"Nothing was changed on disk. Fix: {_state_fix(model_dir, path)}.")
  state.model_checkpoint_path = os.path.join(model_dir,
                                             state.model_checkpoint_path)
  for i, kept in enumerate(state.all_model_checkpoint_paths):
    state.all_model_checkpoint_paths[i] = os.path.join(model_dir, kept)
  foreign = [p for p in [state.model_checkpoint_path,
                         *state.all_model_checkpoint_paths]
             if not _inside(p, model_dir)]
  if foreign:
    raise ValueError(
        f"Invalid checkpoint state loaded from {model_dir}: the state file "
        f"{path} names checkpoints outside the model_dir ({foreign[:3]}); "
        "using it would read another model's weights, and rotation by "
        "keep_checkpoint_max would delete that folder's files. Nothing was "
        f"changed on disk. Fix: {_state_fix(model_dir, path)}; to use a "
        "checkpoint of another folder, pass it as checkpoint_path= to "
        "evaluate, predict or export, or as warm_start_from= to train.")
  return state


def _inside(path: str, model_dir: str) -> bool:
  """Whether checkpoint `path` lies in model_dir (symlinks resolved)."""
  if "://" in model_dir or "://" in path:
    folder = posixpath.normpath(model_dir)
    where = posixpath.normpath(posixpath.dirname(path))
    return where == folder or where.startswith(folder + "/")
  folder = os.path.realpath(model_dir)
  where = os.path.realpath(os.path.dirname(path))
  return where == folder or where.startswith(folder.rstrip(os.sep) + os.sep)


def _state_fix(model_dir: str, path: str) -> str:
  """How to repair a state file: name a whole checkpoint of model_dir."""
  whole = whole_checkpoints(model_dir)
  if not whole:
    return (f"no whole checkpoint is in {model_dir}: delete {path} to start "
            "over there, or restore the checkpoint files it should name")
  return ("make it name a whole checkpoint of the model_dir, e.g. "
          f"tf.compat.v1.train.update_checkpoint_state({model_dir!r}, "
          f"{os.path.basename(whole[0])!r}) (whole ones here: "
          f"{_names(whole)})")


def missing_files(prefix: str) -> List[str]:
  """Files the checkpoint `prefix` lacks; empty when it is whole."""
  if tf.io.gfile.exists(prefix) and not tf.io.gfile.isdir(prefix):
    return []  # A V1 checkpoint is one file.
  missing = []
  if not tf.io.gfile.exists(prefix + ".index"):
    missing.append(prefix + ".index")
  shards = tf.io.gfile.glob(prefix + ".data-?????-of-?????")
  if not shards:
    return missing + [prefix + ".data-* (every data shard)"]
  count = int(_SHARD.search(shards[0]).group(2))
  missing += sorted(
      set(f"{prefix}.data-{i:05d}-of-{count:05d}" for i in range(count)) -
      set(shards))
  return missing


def _step(prefix: str) -> int:
  match = _STEP.search(prefix)
  return int(match.group(1)) if match else -1


def whole_checkpoints(model_dir: str) -> List[str]:
  """Prefixes of the whole checkpoints in model_dir, newest step first."""
  found = [path[:-len(".index")]
           for path in tf.io.gfile.glob(os.path.join(model_dir, "*.index"))]
  whole = [prefix for prefix in found if not missing_files(prefix)]
  return sorted(whole, key=lambda p: (_step(p), p), reverse=True)


def _names(prefixes: List[str]) -> List[str]:
  return [os.path.basename(p) for p in prefixes[:10]]


def _fix(prefix: str, model_dir: str, from_state_file: bool) -> str:
  """The way out: an older whole checkpoint, or a new model_dir."""
  whole = [p for p in whole_checkpoints(model_dir) if p != prefix]
  if not whole:
    return (f"no whole checkpoint was found in {model_dir}; to start over, "
            "train in a new model_dir")
  if from_state_file:
    return (
        f"or use an older whole checkpoint (whole ones in {model_dir}: "
        f"{_names(whole)}): make the state file name it, e.g. "
        "tf.compat.v1.train.update_checkpoint_state("
        f"{model_dir!r}, {os.path.basename(whole[0])!r}); evaluate, predict "
        "and export also take checkpoint_path=")
  return (f"or pass the checkpoint_path of a whole checkpoint (whole ones "
          f"in {model_dir}: {_names(whole)})")


def _check_whole(prefix: str, model_dir: str, from_state_file: bool) -> None:
  """Raises, naming the files and the fix, unless `prefix` can be read.

  Cheap: the index is read, the data files are only measured.
  """
  missing = missing_files(prefix)
  named_by = (f"{os.path.join(model_dir, STATE_FILE)} names it as the newest "
              "checkpoint," if from_state_file else
              "It was passed as checkpoint_path,")
  if missing:
    raise BrokenCheckpointError(
        f"The passed save_path is not a valid checkpoint: {prefix}. "
        f"{named_by} but it lacks {[os.path.basename(m) for m in missing]} "
        "(lost, or a copy that missed files). Nothing was changed on disk. "
        f"Fix: restore the missing files, "
        f"{_fix(prefix, model_dir, from_state_file)}.", prefix, missing)
  if not tf.io.gfile.exists(prefix + ".index"):
    return  # A V1 checkpoint: one file, read at restore.
  try:
    reader = tf.train.load_checkpoint(prefix)
  except tf.errors.OpError as e:
    raise ValueError(
        f"The checkpoint index file {prefix}.index is corrupt: "
        f"{str(e).strip().splitlines()[0][:200]}. Nothing was changed on "
        f"disk. Fix: restore the file from a copy, "
        f"{_fix(prefix, model_dir, from_state_file)}.") from e
  dtypes = reader.get_variable_to_dtype_map()
  needed = sum(
      int(np.prod(shape)) * dtypes[name].size
      for name, shape in reader.get_variable_to_shape_map().items()
      if dtypes[name] != tf.string and dtypes[name].is_numpy_compatible
      and not _PARTITION_SLOT.search(name))
  shards = sorted(tf.io.gfile.glob(prefix + ".data-?????-of-?????"))
  present = sum(tf.io.gfile.stat(shard).length for shard in shards)
  if present < needed:
    raise ValueError(
        f"The checkpoint data of {prefix} is truncated: "
        f"{[os.path.basename(s) for s in shards]} hold {present} bytes, its "
        f"index describes at least {needed} (a save or copy that did not "
        "finish). Nothing was changed on disk. Fix: restore the file(s) from "
        f"a copy, {_fix(prefix, model_dir, from_state_file)}.")


def checkpoint_to_restore(model_dir: str) -> Optional[str]:
  """The checkpoint the state file names as newest, checked to be whole.

  Returns:
    Its prefix, or None when model_dir has no state file (a new model).

  Raises:
    BrokenCheckpointError: the named checkpoint lacks files; the message
      lists them and the whole checkpoints there are.
    ValueError: a corrupt state file or index file, truncated data, or
      model_dir is a file.
  """
  state = read_state(model_dir)
  if state is None:
    return None
  _check_whole(state.model_checkpoint_path, model_dir, from_state_file=True)
  return state.model_checkpoint_path


def refuse_unnamed_checkpoints(model_dir: str) -> None:
  """Training must not start over beside checkpoints no state file names.

  Without a `checkpoint` state file, TF1 (and the Estimator) started from
  step 0 and overwrote `model.ckpt-0` and later files of the same names.

  Raises:
    ValueError: model_dir holds whole checkpoints but no state file.
  """
  found = whole_checkpoints(model_dir)
  if found:
    newest = os.path.basename(found[0])
    raise ValueError(
        f"model_dir {model_dir} holds checkpoints ({', '.join(_names(found))})"
        f" but no '{STATE_FILE}' file naming them, so training would start "
        "over from step 0 and overwrite them. Nothing was changed on disk. "
        "Fix: name the checkpoint to resume from: "
        f"tf.compat.v1.train.update_checkpoint_state({model_dir!r}, "
        f"{newest!r}); or train into an empty model_dir.")


def usable_checkpoint(checkpoint_path: Optional[str],
                      model_dir: str) -> Optional[str]:
  """`checkpoint_path` if given and whole, else checkpoint_to_restore().

  Raises:
    BrokenCheckpointError: the chosen checkpoint lacks files.
  """
  if not checkpoint_path:
    return checkpoint_to_restore(model_dir)
  checkpoint_path = os.fspath(checkpoint_path)
  if tf.io.gfile.isdir(checkpoint_path):
    return checkpoint_to_restore(checkpoint_path)
  _check_whole(checkpoint_path, os.path.dirname(checkpoint_path) or ".",
               from_state_file=False)
  return checkpoint_path


def recover_kept(saver: tf.compat.v1.train.Saver, model_dir: str) -> None:
  """Gives a new Saver the checkpoints earlier processes kept.

  As TF1's session manager did on restore: without it a new process never
  deletes the checkpoints kept before it, and keep_checkpoint_max is
  exceeded with every restart. Their file times become their save times,
  which keep_checkpoint_every_n_hours compares.
  """
  state = read_state(model_dir)
  if state is not None:
    saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))


# Names a save writes. TensorFlow writes most through a temporary name and
# renames it over (a symlink there is replaced), but the sharded Saver's
# merge writes `<prefix>.index` in place, through a symlink.
_SAVED_NAME = re.compile(
    r"^(checkpoint|graph\.pbtxt|.+\.(index|meta|data-\d{5}-of-\d{5}))$")


def refuse_symlinked_files(model_dir: str) -> None:
  """Training must not write through a symlink out of its model_dir.

  Raises:
    ValueError: a file of a checkpoint (or the state file, graph.pbtxt) in
      model_dir is a symbolic link; names them and the fix.
  """
  if not model_dir or "://" in model_dir or not os.path.isdir(model_dir):
    return
  linked = sorted(name for name in os.listdir(model_dir)
                  if _SAVED_NAME.match(name) and
                  os.path.islink(os.path.join(model_dir, name)))
  if linked:
    shown = {name: os.readlink(os.path.join(model_dir, name))
             for name in linked[:5]}
    raise ValueError(
        f"model_dir {model_dir} holds symbolic links where training saves "
        f"files ({shown}{' ...' if len(linked) > 5 else ''}); a save would "
        "write through them into the files they point to. Nothing was "
        "changed on disk. Fix: replace each link by a copy of its file "
        "(cp --remove-destination \"$(readlink -f LINK)\" LINK), or train "
        "into another model_dir (warm_start_from= can start it from these "
        "checkpoints).")


def remove_unfinished_saves(model_dir: str) -> List[str]:
  """Removes what a killed save left in model_dir; returns what it removed.

  Only temporary files and folders that TensorFlow's checkpoint writers
  rename or delete when a save completes are removed, never a whole
  checkpoint. Call it at the start of training, before anything is saved.
  """
  if not model_dir or not tf.io.gfile.isdir(model_dir):
    return []
  removed = []
  for name in sorted(tf.io.gfile.listdir(model_dir)):
    name = name.rstrip("/")
    path = os.path.join(model_dir, name)
    if _TEMPSTATE.match(name) or _STATE_TMP.match(name) or _RESAVE.match(name):
      if not tf.io.gfile.isdir(path):
        tf.io.gfile.remove(path)
        removed.append(path)
    elif _TEMP_DIR.match(name) and tf.io.gfile.isdir(path):
      parts = tf.io.gfile.listdir(path)
      if all(_TEMP_PART.match(part.rstrip("/")) for part in parts):
        tf.io.gfile.rmtree(path)
        removed.append(path)
  if removed:
    logging.warning(
        "Removed %d leftover(s) of an unfinished checkpoint save: %s",
        len(removed), [os.path.basename(p) for p in removed])
  return removed


def _rotated_to(path: Optional[str], model_dir: str) -> Optional[str]:
  """The newest checkpoint if `path` was deleted and a newer one is named."""
  if not path or tf.io.gfile.exists(path + ".index"):
    return None
  try:
    newest = checkpoint_to_restore(model_dir)
  except ValueError:
    return None
  return newest if newest and newest != path else None


def retry_if_rotated(run: Callable[[Optional[str]], _T],
                     checkpoint_path: Optional[str], model_dir: str,
                     retries: int = 3) -> _T:
  """`run(checkpoint_path)`, again on the newest checkpoint if it vanished.

  While training goes on, keep_checkpoint_max deletes old checkpoints; one
  picked for evaluation can be gone before it is restored. Then `run` is
  called again with the checkpoint the state file now names, at most
  `retries` more times, each logged. Any other failure (one that does not
  name the checkpoint, or while its files are there) is raised as is.
  """
  attempt = 0
  while True:
    try:
      return run(checkpoint_path)
    except (ValueError, tf.errors.OpError) as error:
      newest = _rotated_to(checkpoint_path, model_dir)
      if (newest is None or attempt >= retries or
          os.path.basename(checkpoint_path) not in str(error)):
        raise
      attempt += 1
      logging.warning(
          "Checkpoint %s was deleted before it was restored (rotated away "
          "by keep_checkpoint_max while training goes on); using the "
          "newest, %s (retry %d of %d). The error was: %s", checkpoint_path,
          newest, attempt, retries, str(error).splitlines()[0][:200])
      checkpoint_path = newest
