"""A migration report: verdicts as a table, JSON and a TensorBoard overlay."""

import dataclasses
import json
import os
from typing import Any, Dict, List

from migration.checks.result import CheckResult
from migration.recorders.recording_reader import Recording


@dataclasses.dataclass
class Report:
  """What `migration.compare` returns.

  Attributes:
    old: what ran the old side (runtime description).
    new: what ran the new side.
    results: one CheckResult per check, in order.
    settings: steps, seed and input sizes both sides used.
  """
  old: str
  new: str
  results: List[CheckResult]
  settings: Dict[str, Any]

  @property
  def passed(self) -> bool:
    """True when no check failed (n/a checks do not fail)."""
    return all(r.passed for r in self.results)

  @property
  def failures(self) -> List[CheckResult]:
    return [r for r in self.results if not r.passed]

  def __getitem__(self, name: str) -> CheckResult:
    for result in self.results:
      if result.name == name:
        return result
    raise KeyError(f"No check named {name!r}; checks: "
                   f"{[r.name for r in self.results]}")

  def table(self) -> str:
    """The human-readable report."""
    width = max(len(r.name) for r in self.results) if self.results else 5
    lines = [f"old: {self.old}", f"new: {self.new}",
             "settings: " + ", ".join(f"{k}={v}"
                                      for k, v in self.settings.items()), ""]
    for result in self.results:
      lines.append(f"{result.name:<{width}}  {result.verdict:<4}  "
                   f"{result.summary}")
      if result.cause and not result.passed:
        lines.append(f"{'':<{width}}        cause: {result.cause}")
    failed = len(self.failures)
    lines += ["", "PASSED: every check matches." if not failed else
              f"FAILED: {failed} of {len(self.results)} checks differ "
              f"({', '.join(r.name for r in self.failures)})."]
    return "\n".join(lines)

  def to_json(self) -> Dict[str, Any]:
    return {"passed": self.passed, "old": self.old, "new": self.new,
            "settings": self.settings,
            "checks": [dataclasses.asdict(r) for r in self.results]}

  def write(self, directory: str, old: Recording, new: Recording) -> None:
    """report.json, report.txt, and old/ and new/ TensorBoard runs."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "report.json"), "w") as f:
      json.dump(self.to_json(), f, indent=1, default=str)
    with open(os.path.join(directory, "report.txt"), "w") as f:
      f.write(self.table() + "\n")
    for name, recording in (("old", old), ("new", new)):
      _write_events(os.path.join(directory, name), recording)


def _write_events(directory: str, recording: Recording) -> None:
  """The run's per-step loss and its eval metrics as TensorBoard scalars."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  writer = tf.summary.create_file_writer(directory)
  with writer.as_default():
    for step, loss in recording.meta.get("losses", []):
      tf.summary.scalar("loss", loss, step=int(step))
    final = int(recording.meta.get("final_step") or 0)
    for key, value in recording.meta.get("eval_metrics", {}).items():
      if key != "global_step" and isinstance(value, (int, float)):
        tf.summary.scalar(f"eval/{key}", float(value), step=final)
    tf.summary.text("runtime", recording.runtime, step=0)
  writer.close()
