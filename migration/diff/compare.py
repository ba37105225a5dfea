"""diff_model_dirs: every difference between two Estimator model_dirs."""

import fnmatch
import os
from typing import Iterable, Mapping, Optional, Union

import numpy as np
import tensorflow as tf

from migration.diff import checkpoints
from migration.diff import events
from migration.diff import exports
from migration.diff import layout
from migration.diff.result import Difference, KINDS, ModelDirDiff


class DiffError(ValueError):
  """A model_dir or an argument that cannot be compared."""


def _examples(examples) -> Optional[Mapping[str, np.ndarray]]:
  if examples is None or isinstance(examples, Mapping):
    return examples
  try:
    with np.load(examples, allow_pickle=False) as data:
      return {k: data[k] for k in data.files}
  except (OSError, ValueError) as e:
    raise DiffError(f"examples {examples!r} is not a readable .npz file "
                    f"({e}). Fix: np.savez(FILE, **{{input_key: array}}).") from e


def ignored(difference: Difference, ignore: Iterable[str]) -> bool:
  texts = (difference.kind, difference.where,
           f"{difference.kind}:{difference.where}")
  return any(fnmatch.fnmatchcase(t, pattern) for pattern in ignore
             for t in texts)


def diff_model_dirs(old_dir: str, new_dir: str, *, rtol: float = 0.0,
                    atol: float = 0.0,
                    examples: Union[None, str, Mapping[str, np.ndarray]] = None,
                    ignore: Iterable[str] = ()) -> ModelDirDiff:
  """Compares everything an Estimator leaves in two model_dirs.

  Either side may come from the real Estimator (TF <= 2.15) or from
  estimator_compat (either engine); nothing here needs either.

  Compared: the checkpoint steps and the `checkpoint` state file; every
  checkpoint's variables by name (shapes, dtypes, values; optimizer slots
  and global_step included); the first checkpoints (`start`: the two runs
  did not start from the same values); the summaries of every events
  directory (`.`, `eval`, `eval_<name>`: tags, steps, scalar values) and
  each eval directory's final evaluation; every SavedModel (signatures and
  their outputs on the same inputs); which files exist. Not compared: wall
  times, speed summaries (`global_step/sec`, `examples/sec`), event file
  names, export timestamps (exports pair by order), graph.pbtxt, meta
  graphs and the graphs in the events.

  Args:
    old_dir: the old (reference) model_dir.
    new_dir: the new model_dir.
    rtol: relative tolerance for float values (variables, scalars,
      metrics, export outputs); integers, bools and strings are exact.
    atol: absolute tolerance for float values.
    examples: inputs for the exports' signatures by input key: a dict of
      arrays or an .npz file (default: inputs built from each signature).
    ignore: fnmatch patterns; a difference whose kind, where or
      `kind:where` matches one is left out (e.g. "layout",
      "event_value:.: loss", "*/Adam*").

  Returns:
    A ModelDirDiff (`.ok`, `.differences`, `.format_table()`, `.to_json()`).

  Raises:
    DiffError: a directory is missing, or a file in it cannot be read.
  """
  for name, path in (("old", old_dir), ("new", new_dir)):
    if not os.path.isdir(path):
      raise DiffError(f"the {name} model_dir {path!r} is not a directory. "
                      "Fix: pass the model_dir an Estimator wrote.")
  if rtol < 0 or atol < 0:
    raise DiffError(f"rtol={rtol} and atol={atol} must be >= 0.")
  if isinstance(ignore, str):
    ignore = (ignore,)
  example_arrays = _examples(examples)
  try:
    found, notes, checkpoint_count = checkpoints.compare(
        old_dir, new_dir, rtol, atol)
    event_found, tag_count = events.compare(old_dir, new_dir, rtol, atol)
    export_found, export_count = exports.compare(
        old_dir, new_dir, rtol, atol, example_arrays)
    layout_found = layout.compare(old_dir, new_dir)
  except (tf.errors.OpError, OSError) as e:
    raise DiffError(f"cannot read the model_dirs: {type(e).__name__}: "
                    f"{e}") from e
  everything = found + event_found + export_found + layout_found
  order = {kind: i for i, kind in enumerate(KINDS)}
  everything.sort(key=lambda d: order[d.kind])
  kept = tuple(d for d in everything if not ignored(d, ignore))
  if not any(d.kind == "start" for d in kept):
    notes = [n for n in notes if "same first checkpoint" not in n]
  return ModelDirDiff(
      old_dir=old_dir, new_dir=new_dir, differences=kept,
      compared=(("checkpoints", checkpoint_count), ("event tags", tag_count),
                ("exports", export_count)),
      notes=tuple(notes))
