"""evaluate()'s results as the events-file Summary (front/eval_summary.py).

Numbers (numpy scalars and 0-d arrays included) are scalar summaries; a
serialized Summary is retagged `<key>/<i>`; one that cannot be parsed and
values of other types are skipped with the Estimator's warning; arrays are
tensor summaries; global_step and None are left out.
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.front import eval_summary


@pytest.fixture
def warnings(warnings_of):
  return warnings_of(eval_summary)


def _image_summary_bytes():
  summary = tf.compat.v1.Summary()
  summary.value.add(tag="img", simple_value=1.0)
  summary.value.add(tag="img2", simple_value=2.0)
  return summary.SerializeToString()


def _by_tag(summary):
  return {value.tag: value for value in summary.value}


def test_numbers_and_zero_d_arrays_are_scalars():
  summary = eval_summary.summary_of({
      "acc": np.float32(0.5), "n": 3, "flag": True,
      "zero_d": np.array(2.5), "int_zero_d": np.array(4, dtype=np.int64),
      "global_step": 10, "missing": None})
  values = _by_tag(summary)
  assert sorted(values) == ["acc", "flag", "int_zero_d", "n", "zero_d"]
  assert values["zero_d"].simple_value == 2.5
  assert values["int_zero_d"].simple_value == 4.0
  assert values["flag"].simple_value == 1.0


def test_a_serialized_summary_is_retagged_also_from_a_zero_d_array():
  raw = _image_summary_bytes()
  summary = eval_summary.summary_of({"pic": raw, "wrapped": np.array(raw)})
  values = _by_tag(summary)
  assert sorted(values) == ["pic/0", "pic/1", "wrapped/0", "wrapped/1"]
  assert values["pic/1"].simple_value == 2.0
  assert values["wrapped/0"].simple_value == 1.0


def test_unparseable_bytes_and_strings_are_skipped_with_a_warning(warnings):
  summary = eval_summary.summary_of({"bad": b"junk", "name": "text"})
  assert not summary.value
  assert warnings[0] == (
      "Skipping summary for bad, cannot parse string to Summary.")
  assert warnings[1].startswith("Skipping summary for name, must be a float")
  assert "(got str)" in warnings[1]


def test_an_array_is_a_tensor_summary():
  summary = eval_summary.summary_of({"confusion": np.eye(2)})
  (value,) = summary.value
  assert value.tag == "confusion" and value.node_name == "confusion"
  np.testing.assert_array_equal(tf.make_ndarray(value.tensor), np.eye(2))
