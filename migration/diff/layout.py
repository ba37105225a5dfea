"""The file layout: which files a model_dir holds, minus what must differ."""

import os
import re
from typing import Iterable, List, Set

from migration.diff import checkpoints as checkpoints_lib
from migration.diff import events as events_lib
from migration.diff import exports as exports_lib
from migration.diff.result import Difference

# Profiler runs are named by time and host.
_PROFILE = re.compile(r"(^|/)plugins/profile/.*$")
_CHECKPOINT_FILE = re.compile(r"^(?P<prefix>[^/]+)-(?P<step>\d+)\.[^/]+$")


def files(model_dir: str) -> Set[str]:
  """The model_dir's files, relative and normalized.

  Event file names become `events.out.tfevents.*` (they hold a time and a
  host name), export timestamp directories become their rank (`#1`),
  profiler runs one `plugins/profile/*`; temporary exports (`temp-*`) are
  left out.

  Args:
    model_dir: the model_dir to list.
  """
  export_labels = {os.path.relpath(path, model_dir): label for label, path
                   in exports_lib.exports(model_dir).items()}
  names = set()
  for root, dirs, filenames in os.walk(model_dir):
    dirs[:] = [d for d in dirs if not d.startswith("temp-")]
    rel_root = os.path.relpath(root, model_dir)
    for name in filenames:
      rel = os.path.normpath(os.path.join(rel_root, name)).replace(os.sep, "/")
      if events_lib.EVENTS_MARK in name:
        rel = os.path.join(os.path.dirname(rel),
                           "events.out.tfevents.*").lstrip("/")
      for path, label in export_labels.items():
        if rel.startswith(path + "/"):
          rel = label + rel[len(path):]
          break
      rel = _PROFILE.sub(r"\1plugins/profile/*", rel)
      names.add(rel)
  return names


def _reported_elsewhere(name: str, one_sided_steps: Iterable[int],
                        one_sided_exports: Iterable[str]) -> bool:
  match = _CHECKPOINT_FILE.match(name)
  if match and int(match.group("step")) in set(one_sided_steps):
    return True
  return any(name.startswith(label + "/") for label in one_sided_exports)


def compare(old_dir: str, new_dir: str) -> List[Difference]:
  """Files present on one side only.

  Files of checkpoints or exports that exist on one side only are left to
  the `checkpoints` and `export_missing` differences.

  Args:
    old_dir: the old model_dir.
    new_dir: the new model_dir.
  """
  old, new = files(old_dir), files(new_dir)
  old_steps = set(checkpoints_lib.checkpoints(old_dir))
  new_steps = set(checkpoints_lib.checkpoints(new_dir))
  old_exports = set(exports_lib.exports(old_dir))
  new_exports = set(exports_lib.exports(new_dir))
  steps = old_steps ^ new_steps
  labels = old_exports ^ new_exports
  differences = []
  for name in sorted(old ^ new):
    if _reported_elsewhere(name, steps, labels):
      continue
    side = "old" if name in old else "new"
    differences.append(Difference("layout", name, f"only on the {side} side"))
  return differences
