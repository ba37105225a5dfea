"""diff_model_dirs' argument checks and ignore patterns (migration/diff)."""

import numpy as np
import pytest

from migration.diff import compare
from migration.diff.result import Difference


def test_a_missing_model_dir_is_refused_with_the_fix(tmp_path):
  with pytest.raises(compare.DiffError) as raised:
    compare.diff_model_dirs(str(tmp_path / "absent"), str(tmp_path))
  assert "the old model_dir" in str(raised.value)
  assert "Fix: pass the model_dir an Estimator wrote." in str(raised.value)


def test_negative_tolerances_are_refused(tmp_path):
  with pytest.raises(compare.DiffError, match="must be >= 0"):
    compare.diff_model_dirs(str(tmp_path), str(tmp_path), rtol=-1.0)


def test_examples_must_be_a_readable_npz(tmp_path):
  bad = tmp_path / "examples.npz"
  bad.write_text("not an npz")
  with pytest.raises(compare.DiffError) as raised:
    compare.diff_model_dirs(str(tmp_path), str(tmp_path), examples=str(bad))
  assert "is not a readable .npz file" in str(raised.value)
  assert "Fix: np.savez(FILE, **{input_key: array})" in str(raised.value)


def test_examples_load_from_an_npz(tmp_path):
  path = tmp_path / "examples.npz"
  np.savez(path, x=np.arange(3))
  loaded = compare._examples(str(path))  # pylint: disable=protected-access
  np.testing.assert_array_equal(loaded["x"], [0, 1, 2])
  given = {"x": np.ones(2)}
  assert compare._examples(given) is given  # pylint: disable=protected-access


def test_two_empty_model_dirs_do_not_differ(tmp_path):
  (tmp_path / "a").mkdir()
  (tmp_path / "b").mkdir()
  got = compare.diff_model_dirs(str(tmp_path / "a"), str(tmp_path / "b"),
                                ignore="layout")
  assert got.ok and not got.differences


def test_ignore_patterns_match_kind_where_or_both():
  variable = Difference("variable", "model.ckpt-1: dense/Adam", "detail")
  assert compare.ignored(variable, ["variable"])
  assert compare.ignored(variable, ["*/Adam*"])
  assert compare.ignored(variable, ["variable:model.ckpt-1: *"])
  assert not compare.ignored(variable, ["layout", "variable:*: w"])
  assert not compare.ignored(variable, [])
