"""Reads a recording directory written by migration.recorders.recording_writer (or a golden)."""

import json
import os
from typing import Any, Dict, List, Optional

import numpy as np

from migration import batches as batches_lib


class Recording:
  """One side's recording; missing parts read as empty (see `error`)."""

  def __init__(self, directory: str):
    path = os.path.join(directory, "recording.json")
    if not os.path.exists(path):
      raise ValueError(f"{directory} is not a recording (no recording.json). "
                       "Fix: record one with `python -m migration record "
                       "--out DIR`, or pass --old=graph.")
    self.directory = directory
    with open(path) as f:
      self.meta: Dict[str, Any] = json.load(f)
    self._arrays: Dict[str, Dict[str, np.ndarray]] = {}

  @property
  def runtime(self) -> str:
    return self.meta.get("runtime", "?")

  def error(self, *phases: str) -> Optional[str]:
    """The first error of the given phases ('inputs', 'probe', ...)."""
    errors = self.meta.get("errors", {})
    for phase in ("inputs",) + phases:
      if phase in errors:
        return f"{phase}: {errors[phase]}"
    return None

  def arrays(self, name: str) -> Dict[str, np.ndarray]:
    """The arrays of <name>.npz, by key ({} when absent)."""
    if name not in self._arrays:
      path = os.path.join(self.directory, f"{name}.npz")
      if os.path.exists(path):
        with np.load(path, allow_pickle=True) as data:
          self._arrays[name] = {k: data[k] for k in data.files}
      else:
        self._arrays[name] = {}
    return self._arrays[name]

  def batches(self, name: str) -> List[batches_lib.Batch]:
    return batches_lib.unflatten(self.arrays("inputs"), name)

  def trajectory(self) -> Dict[int, Dict[str, np.ndarray]]:
    """Variables after each step: {step: {name: value}}."""
    steps: Dict[int, Dict[str, np.ndarray]] = {}
    for key, value in self.arrays("trajectory").items():
      step, name = key.split("/", 1)
      steps.setdefault(int(step), {})[name] = value
    return steps

  def start_checkpoint(self) -> str:
    return os.path.join(self.directory, "ckpt0", "model.ckpt-0")

  def final_checkpoint(self) -> Optional[str]:
    step = self.meta.get("final_step")
    if step is None:
      return None
    return os.path.join(self.directory, "final", f"model.ckpt-{step}")
