"""How `migration` words a difference between two recorded values.

Floats match within rtol/atol (NaN equal to NaN) and report the largest
gap; integers, bools and strings must be equal and report the first
difference; shapes must agree.
"""

import numpy as np

from migration.diff.values import describe, difference


def test_equal_values_have_no_difference():
  assert difference([1.0, np.nan], [1.0 + 1e-9, np.nan], 1e-6, 0) is None
  assert difference([1, 2], [1, 2], 0, 0) is None
  assert difference([b"a", b"b"], [b"a", b"b"], 0, 0) is None


def test_a_shape_difference_comes_first():
  assert difference([1.0, 2.0], [[1.0, 2.0]], 1, 1) == (
      "shape old [2] vs new [1, 2]")


def test_floats_report_the_largest_gap_and_where():
  got = difference([[0.0, 1.0], [2.0, 3.0]], [[0.0, 1.5], [2.0, 9.0]],
                   1e-6, 1e-6)
  assert got == ("2 of 4 values differ (rtol 1e-06, atol 1e-06); largest at "
                 "[1, 1]: old 3.0 vs new 9.0 (|diff| 6)")


def test_a_nan_on_one_side_is_the_largest_gap():
  got = difference([1.0, 2.0], [1.5, np.nan], 0, 0)
  assert "largest at [1]: old 2.0 vs new nan" in got


def test_a_float_scalar_is_the_value():
  assert difference(1.0, 2.0, 0, 0).endswith(
      "largest at the value: old 1.0 vs new 2.0 (|diff| 1)")


def test_exact_values_report_the_first_difference():
  assert difference([[1, 2], [3, 4]], [[1, 2], [5, 4]], 1, 1) == (
      "1 of 4 values differ (exact); first at [1, 0]: old 3 vs new 5")
  assert difference(3, 4, 0, 0) == "old 3 vs new 4"
  assert difference([b"a", b"b"], [b"a", b"c"], 0, 0) == (
      "1 of 2 values differ (exact); first at [1]: old 'b' vs new 'c'")


def test_describe_shows_scalars_in_full_and_arrays_by_head():
  assert describe(b"caf\xc3\xa9") == "'café'"
  assert describe(np.arange(5)) == "int64[5] [0, 1, 2, ...]"
  assert describe([True, False]) == "bool[2] [True, False]"
