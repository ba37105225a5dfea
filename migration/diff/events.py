"""Events: per directory, which tags were written, at which steps, values."""

import os
import shutil
from typing import Dict, List, Optional, Tuple

import tensorflow as tf
from tensorflow.core.util import event_pb2

from migration.diff import values
from migration.diff.result import Difference

# Speed summaries: they measure the machine, not the program.
SPEED_TAGS = frozenset({"global_step/sec", "examples/sec"})
EVENTS_MARK = "tfevents"

# {tag: [(step, scalar value or None for non-scalar summaries)]}
Series = Dict[str, List[Tuple[int, Optional[float]]]]


def event_files(model_dir: str) -> Dict[str, List[str]]:
  """{directory relative to model_dir ('.', 'eval', ...): its event files}."""
  found = {}
  for root, _, files in os.walk(model_dir):
    names = sorted(f for f in files if EVENTS_MARK in f)
    if names:
      rel = os.path.relpath(root, model_dir)
      found[rel] = [os.path.join(root, f) for f in names]
  return dict(sorted(found.items()))


def _scalar(value) -> Optional[float]:
  if value.HasField("simple_value"):
    return float(value.simple_value)
  if value.HasField("tensor") and not value.tensor.tensor_shape.dim:
    array = tf.make_ndarray(value.tensor)
    if array.dtype.kind in "biuf":
      return float(array)
  return None


def read(paths: List[str]) -> Series:
  """The summaries in event files, in file then record order.

  Speed summaries (`SPEED_TAGS`) are left out; graphs, meta graphs, session
  logs and wall times are not summaries and are not read.

  Args:
    paths: event files of one directory.
  """
  series: Series = {}
  for path in paths:
    for record in tf.data.TFRecordDataset(path):
      event = event_pb2.Event.FromString(record.numpy())
      if not event.HasField("summary"):
        continue
      for value in event.summary.value:
        if value.tag in SPEED_TAGS:
          continue
        series.setdefault(value.tag, []).append(
            (int(event.step), _scalar(value)))
  return series


def is_eval_dir(rel: str) -> bool:
  return rel == "eval" or rel.startswith("eval_")


def _compare_tag(where: str, old, new, rtol: float,
                 atol: float) -> List[Difference]:
  old_steps, new_steps = [s for s, _ in old], [s for s, _ in new]
  if old_steps != new_steps:
    return [Difference("event_steps", where,
                       f"steps old {_steps_text(old_steps)} vs new "
                       f"{_steps_text(new_steps)}")]
  differing = []
  for (step, a), (_, b) in zip(old, new):
    if (a is None) != (b is None):
      differing.append(f"step {step}: old {'non-scalar' if a is None else a}"
                       f" vs new {'non-scalar' if b is None else b}")
    elif a is not None and values.difference(a, b, rtol, atol):
      differing.append(f"step {step}: old {a!r} vs new {b!r} (|diff| "
                       f"{abs(a - b):.3g})")
  if not differing:
    return []
  return [Difference("event_value", where,
                     f"{len(differing)} of {len(old)} values differ; first "
                     f"at {differing[0]}")]


def _steps_text(steps: List[int]) -> str:
  if len(steps) <= 8:
    return str(steps)
  return f"[{steps[0]}, {steps[1]}, ..., {steps[-1]}] ({len(steps)} events)"


def _final_evaluation(series: Series) -> Tuple[Optional[int], Dict[str, float]]:
  last = max((s for points in series.values() for s, _ in points),
             default=None)
  return last, {tag: v for tag, points in series.items()
                for s, v in points if s == last and v is not None}


def _compare_eval(rel: str, old: Series, new: Series, rtol: float,
                  atol: float) -> List[Difference]:
  """One line per eval dir: the final evaluation's metrics."""
  old_step, old_metrics = _final_evaluation(old)
  new_step, new_metrics = _final_evaluation(new)
  parts = []
  if old_step != new_step:
    parts.append(f"final evaluation at step old {old_step} vs new "
                 f"{new_step}")
  for tag in sorted(set(old_metrics) | set(new_metrics)):
    if tag not in new_metrics:
      parts.append(f"{tag} only old ({old_metrics[tag]!r})")
    elif tag not in old_metrics:
      parts.append(f"{tag} only new ({new_metrics[tag]!r})")
    elif values.difference(old_metrics[tag], new_metrics[tag], rtol, atol):
      parts.append(f"{tag} old {old_metrics[tag]!r} vs new "
                   f"{new_metrics[tag]!r}")
  if not parts:
    return []
  return [Difference("eval_result", rel, "; ".join(parts))]


def compare(old_dir: str, new_dir: str, rtol: float,
            atol: float) -> Tuple[List[Difference], int]:
  """Compares the events of two model_dirs.

  Args:
    old_dir: the old model_dir.
    new_dir: the new model_dir.
    rtol: relative tolerance for scalar values.
    atol: absolute tolerance for scalar values.

  Returns:
    (differences, number of tags compared on both sides).
  """
  old_files, new_files = event_files(old_dir), event_files(new_dir)
  differences, evals, compared = [], [], 0
  for rel in sorted(set(old_files) | set(new_files)):
    old = read(old_files[rel]) if rel in old_files else {}
    new = read(new_files[rel]) if rel in new_files else {}
    for tag in sorted(set(old) | set(new)):
      where = f"{rel}: {tag}"
      if tag not in new or tag not in old:
        side = "old" if tag in old else "new"
        points = (old if tag in old else new)[tag]
        differences.append(Difference(
            "event_tag_missing", where, f"written on the {side} side only "
            f"(steps {_steps_text([s for s, _ in points])})"))
        continue
      compared += 1
      differences.extend(_compare_tag(where, old[tag], new[tag], rtol, atol))
    if is_eval_dir(rel):
      evals.extend(_compare_eval(rel, old, new, rtol, atol))
  return differences + evals, compared


def write_overlay(old_dir: str, new_dir: str, out_dir: str) -> None:
  """Copies both sides' event files to out_dir/old and out_dir/new.

  `tensorboard --logdir out_dir` then shows each tag's two curves overlaid
  (the runs `old`, `old/eval`, `new`, `new/eval`, ...).

  Args:
    old_dir: the old model_dir.
    new_dir: the new model_dir.
    out_dir: the overlay directory (created; existing files are kept).
  """
  for side, model_dir in (("old", old_dir), ("new", new_dir)):
    for rel, paths in event_files(model_dir).items():
      target = os.path.normpath(os.path.join(out_dir, side, rel))
      os.makedirs(target, exist_ok=True)
      for path in paths:
        shutil.copy2(path, target)


def scalars(model_dir: str) -> Dict[str, Series]:
  """{events directory: its summaries} (for callers that plot or print)."""
  return {rel: read(paths) for rel, paths in event_files(model_dir).items()}


