"""Migration checks: show that a run on estimator_compat matches the old one.

  report = migration.compare(model_fn, input_fn, params=..., old="graph")
  print(report.table())
  migration.assert_equivalent(model_fn, input_fn, old="tests/goldens/x")
  diff = migration.diff_model_dirs(old_model_dir, new_model_dir)
  print(diff.format_table())   # `python -m migration diff OLD NEW`

The recorder (migration.recorders.recording_writer, `python -m migration record`) must stay
importable on TF 2.15 with the real Estimator, so nothing here imports
estimator_compat at module level.
"""


def compare(*args, **kwargs):
  """See migration.comparison.compare."""
  from migration import comparison as compare_lib  # pylint: disable=g-import-not-at-top
  return compare_lib.compare(*args, **kwargs)


def assert_equivalent(*args, **kwargs):
  """See migration.comparison.assert_equivalent."""
  from migration import comparison as compare_lib  # pylint: disable=g-import-not-at-top
  return compare_lib.assert_equivalent(*args, **kwargs)


from migration.checks.result import Tolerance  # pylint: disable=g-import-not-at-top,wrong-import-position
from migration.diff import Difference, diff_model_dirs, ModelDirDiff  # pylint: disable=g-import-not-at-top,wrong-import-position
from migration.rewrite import Rewrite  # pylint: disable=g-import-not-at-top,wrong-import-position

__all__ = ["compare", "assert_equivalent", "Difference", "diff_model_dirs",
           "ModelDirDiff", "Rewrite", "Tolerance"]
