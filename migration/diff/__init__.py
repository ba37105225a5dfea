"""Diffing two Estimator model_dirs: `python -m migration diff OLD NEW`.

  diff = migration.diff_model_dirs(old_dir, new_dir, rtol=1e-6)
  print(diff.format_table()); assert diff.ok

Runs on TF 2.15 with the real Estimator as well as here: nothing in this
package imports estimator_compat.
"""

from migration.diff.compare import DiffError, diff_model_dirs
from migration.diff.result import Difference, KINDS, ModelDirDiff

__all__ = ["DiffError", "Difference", "KINDS", "ModelDirDiff",
           "diff_model_dirs"]
