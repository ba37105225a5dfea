"""Checkpoints: which steps exist, the `checkpoint` state file, variables."""

import glob
import os
import re
from typing import Dict, List, Optional, Tuple

import tensorflow as tf

from migration.diff import values
from migration.diff.result import Difference

# Written by object-based savers only; a serialized proto, not a variable.
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_INDEX = re.compile(r"^(?P<prefix>.+)-(?P<step>\d+)\.index$")


def checkpoints(model_dir: str) -> Dict[int, str]:
  """The model_dir's checkpoints: {step: path prefix} (e.g. model.ckpt-10)."""
  found = {}
  for path in glob.glob(os.path.join(glob.escape(model_dir), "*.index")):
    match = _INDEX.match(os.path.basename(path))
    if match:
      found[int(match.group("step"))] = path[:-len(".index")]
  return dict(sorted(found.items()))


def _state(model_dir: str) -> Optional[Tuple[str, List[str]]]:
  if not os.path.exists(os.path.join(model_dir, "checkpoint")):
    return None
  state = tf.compat.v1.train.get_checkpoint_state(model_dir)
  if state is None:
    return ("(unreadable)", [])
  return (os.path.basename(state.model_checkpoint_path),
          [os.path.basename(p) for p in state.all_model_checkpoint_paths])


def _variables(prefix: str):
  reader = tf.train.load_checkpoint(prefix)
  shapes = reader.get_variable_to_shape_map()
  dtypes = reader.get_variable_to_dtype_map()
  names = sorted(n for n in shapes if n != OBJECT_GRAPH_KEY)
  return reader, {n: (list(shapes[n]), dtypes[n].name) for n in names}


class Comparison:
  """Compares the checkpoints of two model_dirs (see `compare`)."""

  def __init__(self, old_dir: str, new_dir: str, rtol: float, atol: float):
    self.old = checkpoints(old_dir)
    self.new = checkpoints(new_dir)
    self.old_dir, self.new_dir = old_dir, new_dir
    self.rtol, self.atol = rtol, atol
    self.differences: List[Difference] = []
    self.notes: List[str] = []

  def _add(self, kind: str, where: str, detail: str) -> None:
    self.differences.append(Difference(kind, where, detail))

  def _steps(self) -> None:
    old, new = sorted(self.old), sorted(self.new)
    if old != new:
      only_old = sorted(set(old) - set(new))
      only_new = sorted(set(new) - set(old))
      self._add("checkpoints", ".", f"checkpoint steps old {old} vs new "
                f"{new} (only old: {only_old}, only new: {only_new})")

  def _state_file(self) -> None:
    old, new = _state(self.old_dir), _state(self.new_dir)
    if old == new:
      return
    if old is None or new is None:
      side = "old" if old is None else "new"
      self._add("checkpoint_state", "checkpoint",
                f"no `checkpoint` state file on the {side} side")
      return
    if old[0] != new[0]:
      self._add("checkpoint_state", "checkpoint", "model_checkpoint_path old "
                f"{old[0]} vs new {new[0]}")
    if old[1] != new[1]:
      self._add("checkpoint_state", "checkpoint",
                f"all_model_checkpoint_paths old {old[1]} vs new {new[1]}")

  def _variables_at(self, step: int, is_start: bool) -> None:
    where = os.path.basename(self.old[step])
    old_reader, old = _variables(self.old[step])
    new_reader, new = _variables(self.new[step])
    for name in sorted(set(old) ^ set(new)):
      side = "old" if name in old else "new"
      shape, dtype = (old if name in old else new)[name]
      self._add("variable_missing", f"{where}: {name}",
                f"only on the {side} side ({dtype}{shape})")
    start_values = []
    for name in sorted(set(old) & set(new)):
      if old[name][0] != new[name][0]:
        self._add("variable_shape", f"{where}: {name}",
                  f"old {old[name][0]} vs new {new[name][0]}")
        continue
      if old[name][1] != new[name][1]:
        self._add("variable_dtype", f"{where}: {name}",
                  f"old {old[name][1]} vs new {new[name][1]}")
        continue
      detail = values.difference(old_reader.get_tensor(name),
                                 new_reader.get_tensor(name),
                                 self.rtol, self.atol)
      if detail is None:
        continue
      if is_start:
        start_values.append(f"{name}: {detail}")
      else:
        self._add("variable_value", f"{where}: {name}", detail)
    if start_values:
      self._add("start", where, "the two runs did not start from the same "
                f"first checkpoint: {len(start_values)} of "
                f"{len(set(old) & set(new))} variables differ, e.g. "
                f"{start_values[0]}")
      self.notes.append(
          f"the runs did not start from the same first checkpoint ({where}), "
          "so trained values (later checkpoints, losses, metrics, export "
          "outputs) are expected to differ; start both sides from the same "
          "checkpoint (e.g. `python -m migration run-both`) to compare them")

  def compare(self) -> None:
    """Fills `differences` and `notes`."""
    self._steps()
    self._state_file()
    common = sorted(set(self.old) & set(self.new))
    first = min(self.old) if self.old else None
    if self.old and self.new and first != min(self.new):
      self.notes.append(
          f"the first checkpoints are at different steps (old {first}, new "
          f"{min(self.new)}), so the start point could not be compared")
    for step in common:
      self._variables_at(step, is_start=step == first == min(self.new))


def compare(old_dir: str, new_dir: str, rtol: float,
            atol: float) -> Tuple[List[Difference], List[str], int]:
  """Compares two model_dirs' checkpoints and variables.

  Args:
    old_dir: the old model_dir.
    new_dir: the new model_dir.
    rtol: relative tolerance for float variables.
    atol: absolute tolerance for float variables.

  Returns:
    (differences, notes, number of checkpoint steps on both sides).
  """
  comparison = Comparison(old_dir, new_dir, rtol, atol)
  comparison.compare()
  return (comparison.differences, comparison.notes,
          len(set(comparison.old) & set(comparison.new)))
