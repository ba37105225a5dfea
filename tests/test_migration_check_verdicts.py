"""migration's check verdicts: the shared array comparison and the
SavedModel check (migration/checks/result.py, checks/saved_model.py)."""

import numpy as np
import pytest

from migration.checks import result, saved_model
from migration.checks.result import FAIL, NOT_APPLICABLE, PASS, Tolerance


class _Side:
  """One side's recording, as the checks read it."""

  def __init__(self, export=None, served=None, error=None):
    self.meta = {} if export is None else {"export": export}
    self._served = served or {}
    self._error = error

  def error(self, phase):
    return self._error if phase == "export" else None

  def arrays(self, kind):
    assert kind == "served"
    return self._served


_TOL = Tolerance(rtol=1e-5, atol=1e-6)
_SIG = {"serving_default": "inputs=x outputs=y"}


def _saved(old, new):
  return saved_model.run(old, new, _TOL, earlier=None)


def test_nothing_exported_is_not_applicable():
  got = _saved(_Side(), _Side())
  assert got.verdict == NOT_APPLICABLE and "nothing exported" in got.summary


def test_one_side_failing_to_export_fails_and_names_it():
  got = _saved(_Side(error="ValueError: no receiver"), _Side(export=_SIG))
  assert got.verdict == FAIL and got.worst == "old"
  assert got.summary == "the old side could not run: ValueError: no receiver"


def test_both_sides_raising_the_same_error_leave_nothing_to_compare():
  got = _saved(_Side(error="ValueError: x: detail a"),
               _Side(error="ValueError: x: detail b"))
  assert got.verdict == NOT_APPLICABLE and "both sides raise" in got.summary


def test_different_signatures_fail_on_the_first_that_differs():
  new = dict(_SIG, predict="inputs=x outputs=p")
  got = _saved(_Side(export=_SIG), _Side(export=new))
  assert got.verdict == FAIL and got.worst == "predict"
  assert got.summary == "signature predict: old None vs new inputs=x outputs=p"


def test_served_outputs_within_tolerance_pass_and_beyond_fail():
  old = _Side(export=_SIG, served={"y": np.array([1.0, 2.0])})
  close = _Side(export=_SIG, served={"y": np.array([1.0, 2.0 + 1e-7])})
  far = _Side(export=_SIG, served={"y": np.array([1.0, 2.5])})
  assert _saved(old, close).verdict == PASS
  got = _saved(old, far)
  assert got.verdict == FAIL and got.worst == "y"
  assert got.summary.startswith("served outputs: y[1] old 2.0 vs new 2.5")
  assert got.cause == saved_model.CAUSE


def test_missing_extra_and_reshaped_arrays_are_listed():
  got = result.array_check(
      "c", "what", {"a": [1.0], "b": [1.0], "s": [1.0]},
      {"b": [1.0], "e": [1.0], "s": [1.0, 2.0]}, _TOL, "cause")
  assert got.verdict == FAIL
  assert got.summary == ("what: missing in new: a; extra in new: e; shape "
                         "differs: s")
  assert got.worst == "a"


def test_no_arrays_is_not_applicable_and_empty_arrays_are_skipped():
  assert result.array_check("c", "w", {}, {}, _TOL, "").verdict == (
      NOT_APPLICABLE)
  got = result.array_check("c", "w", {"z": np.zeros([0])},
                           {"z": np.zeros([0])}, _TOL, "")
  assert got.verdict == PASS


def test_integers_compare_as_numbers_strings_exactly():
  missing, extra, reshaped, worst = result.compare_arrays(
      {"ids": np.array([1, 2, 3]), "f": np.array([1.0])},
      {"ids": np.array([1, 5, 3]), "f": np.array([1.0])}, _TOL)
  assert (missing, extra, reshaped) == ([], [], [])
  assert (worst.name, worst.index, worst.old, worst.new) == ("ids", (1,),
                                                             2.0, 5.0)
  assert worst.max_abs == 3.0 and worst.largest_abs == 3.0
  strings = result.compare_arrays({"s": np.array([b"a", b"c"])},
                                  {"s": np.array([b"a", b"b"])}, _TOL)[3]
  assert (strings.name, strings.index, strings.old, strings.new) == (
      "s", (1,), "b'c'", "b'b'")
  assert strings.ratio == float("inf")


def test_a_per_step_tolerance_grows_with_the_step():
  per_step = Tolerance(rtol=1e-5, atol=1e-6, per_step=True)
  grown = per_step.at_step(3)
  assert (grown.rtol, grown.atol) == (pytest.approx(3e-5), pytest.approx(3e-6))
  assert _TOL.at_step(3) is _TOL
  assert per_step.describe() == "rtol 1e-05, atol 1e-06 per step"
  assert result.CheckResult("c", FAIL, "s").passed is False
  assert result.CheckResult("c", NOT_APPLICABLE, "s").passed is True
