"""Finishes a keep_checkpoint_max rotation that a kill cut short.

TF1's `Saver.save` writes the new checkpoint, then the `checkpoint` state
file without the oldest kept checkpoint, then deletes that one's files. A
kill between the last two leaves a whole checkpoint that no list names and
no later rotation deletes: one more file set over keep_checkpoint_max per
such kill (8 kills of the function engine left 2).

The function engine's checkpoint writer names the checkpoint its save will
delete in `<model_dir>/.rotation` (written through a temporary name) before
the save, and removes the file after it. The next train() (the chief,
holding the model_dir lock) finishes the rotation: it deletes that
checkpoint if the state file no longer names it, which is what the
interrupted save was doing, and nothing else. Checkpoints kept for good by
keep_checkpoint_every_n_hours are never named there.
"""

import os
import re
from typing import Any, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.lib.io import file_io

from estimator_compat.front import tf_logging as logging

ROTATION_FILE = ".rotation"
# A checkpoint prefix the Saver names: `<name>-<step>`, a file name only.
_PREFIX = re.compile(r"^[^/\\]+-\d+$")
_FILES = re.compile(r"^(?P<prefix>.+)\.(index|meta|data-\d{5}-of-\d{5})$")


def victim(saver: Any, new_prefix: str) -> Optional[str]:
  """The checkpoint `saver.save()` to `new_prefix` will delete, if any."""
  # pylint: disable=protected-access
  # (saver_def is built by the first save in eager mode.)
  max_to_keep = getattr(saver, "_max_to_keep", None)
  if not max_to_keep or max_to_keep < 0:
    return None
  new = os.path.basename(new_prefix)
  kept = [(path, saved_at) for path, saved_at in
          getattr(saver, "_last_checkpoints", None) or ()
          if os.path.basename(path) != new]
  pending = list(getattr(saver, "_checkpoints_to_be_deleted", None) or ())
  pending += kept[:max(0, len(kept) + 1 - max_to_keep)]
  if not pending:
    return None
  path, saved_at = pending[0]
  if saved_at > getattr(saver, "_next_checkpoint_time", float("inf")):
    return None  # keep_checkpoint_every_n_hours keeps it for good.
  # pylint: enable=protected-access
  return os.path.basename(path)


def record(model_dir: str, prefix: Optional[str]) -> None:
  """Before a save: names the checkpoint it will delete (None: none)."""
  if prefix:
    file_io.atomic_write_string_to_file(
        os.path.join(model_dir, ROTATION_FILE), prefix)


def clear(model_dir: str) -> None:
  """After a save: its rotation is done."""
  path = os.path.join(model_dir, ROTATION_FILE)
  if tf.io.gfile.exists(path):
    tf.io.gfile.remove(path)


def _named_by_state(model_dir: str) -> Optional[set]:
  state = tf.train.get_checkpoint_state(model_dir)
  if state is None:
    return None
  return {os.path.basename(p) for p in
          [state.model_checkpoint_path, *state.all_model_checkpoint_paths]}


def finish_cut_short(model_dir: str) -> Optional[str]:
  """At the start of training: deletes the checkpoint a killed save was
  deleting, if the state file no longer names it; returns its prefix."""
  if not model_dir or "://" in model_dir:
    return None
  if not os.path.isdir(model_dir):
    return None
  for name in os.listdir(model_dir):  # A write of the record cut short.
    if name.startswith(ROTATION_FILE + ".tmp"):
      os.remove(os.path.join(model_dir, name))
  path = os.path.join(model_dir, ROTATION_FILE)
  if not os.path.isfile(path) or os.path.islink(path):
    return None
  with open(path, encoding="utf-8", errors="replace") as f:
    prefix = f.read().strip()
  named = _named_by_state(model_dir) if _PREFIX.match(prefix) else None
  removed = []
  if named is not None and prefix not in named:
    for name in sorted(os.listdir(model_dir)):
      match = _FILES.match(name)
      if match and match.group("prefix") == prefix:
        os.remove(os.path.join(model_dir, name))
        removed.append(name)
  os.remove(path)
  if not removed:
    return None
  logging.warning(
      "Removed %s (%s): keep_checkpoint_max's rotation was deleting it when "
      "the last training process was killed (the state file no longer "
      "names it).", prefix, removed)
  return prefix
