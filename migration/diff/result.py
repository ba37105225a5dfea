"""The result of comparing two model_dirs: differences, a table, JSON."""

import dataclasses
import textwrap
from typing import Any, Dict, Tuple

# The kinds of difference, in the order the report lists them.
KINDS = (
    "start",             # the two runs did not start from the same checkpoint
    "checkpoints",       # which checkpoint steps exist
    "checkpoint_state",  # the `checkpoint` state file
    "variable_missing",  # a variable saved on one side only
    "variable_shape",
    "variable_dtype",
    "variable_value",
    "event_tag_missing",  # a summary tag written on one side only
    "event_steps",        # the steps a tag was written at
    "event_value",        # a scalar summary's value
    "eval_result",        # an evaluation's metrics (from the eval dirs)
    "export_missing",     # an export directory on one side only
    "signature",          # a SavedModel signature's names, keys, dtypes, shapes
    "export_output",      # a signature's outputs on the same inputs
    "layout",             # which files exist
)


@dataclasses.dataclass(frozen=True)
class Difference:
  """One difference between the old and the new model_dir.

  Attributes:
    kind: one of `KINDS`.
    where: what differs, relative to the model_dir (a checkpoint and
      variable, an events directory and tag, an export and signature, ...).
    detail: what the old and the new side hold.
  """
  kind: str
  where: str
  detail: str

  def to_json(self) -> Dict[str, str]:
    return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class ModelDirDiff:
  """Every difference between two model_dirs (see `diff_model_dirs`).

  Attributes:
    old_dir: the old side's model_dir.
    new_dir: the new side's model_dir.
    differences: the differences, in `KINDS` order.
    compared: what was compared, per part (e.g. {"checkpoints": 3}).
    notes: how to read the differences (e.g. that trained values differ
      because the runs started from different checkpoints).
  """
  old_dir: str
  new_dir: str
  differences: Tuple[Difference, ...]
  compared: Tuple[Tuple[str, int], ...] = ()
  notes: Tuple[str, ...] = ()

  @property
  def ok(self) -> bool:
    """True when the two model_dirs show no difference."""
    return not self.differences

  def to_json(self) -> Dict[str, Any]:
    return {
        "old": self.old_dir,
        "new": self.new_dir,
        "ok": self.ok,
        "compared": dict(self.compared),
        "differences": [d.to_json() for d in self.differences],
        "notes": list(self.notes),
    }

  def format_table(self, width: int = 100) -> str:
    """The differences as a text table: kind, where, detail."""
    lines = [f"old: {self.old_dir}", f"new: {self.new_dir}"]
    if self.compared:
      lines.append("compared: " + ", ".join(
          f"{count} {part}" for part, count in self.compared))
    lines.append("")
    if self.differences:
      kind_width = max(len(d.kind) for d in self.differences)
      where_width = min(40, max(len(d.where) for d in self.differences))
      lines.append(f"{'kind':<{kind_width}}  {'where':<{where_width}}  "
                   "detail")
      indent = " " * (kind_width + where_width + 4)
      for d in self.differences:
        where = d.where
        if len(where) > where_width:
          lines.append(f"{d.kind:<{kind_width}}  {where}")
          head = f"{'':<{kind_width}}  {'':<{where_width}}  "
        else:
          head = f"{d.kind:<{kind_width}}  {where:<{where_width}}  "
        detail = textwrap.wrap(d.detail, max(30, width - len(head))) or [""]
        lines.append(head + detail[0])
        lines.extend(indent + rest for rest in detail[1:])
      lines.append("")
      counts = {}
      for d in self.differences:
        counts[d.kind] = counts.get(d.kind, 0) + 1
      lines.append(f"DIFFERENT: {len(self.differences)} differences (" +
                   ", ".join(f"{k} {n}" for k, n in counts.items()) + ")")
    else:
      lines.append("SAME: no differences.")
    lines.extend(f"note: {note}" for note in self.notes)
    return "\n".join(lines) + "\n"
