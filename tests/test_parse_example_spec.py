"""classifier_/regressor_parse_example_spec, tf.estimator and v1 versions.

The specs and the error wording (before our "Fix:" sentence) are what the
real Estimator (TF 2.15) returned and raised for the same calls.
"""

import pytest
import tensorflow as tf

import estimator_compat as ec
from estimator_compat import v1

_COLUMNS = [tf.feature_column.numeric_column("x", shape=(2,))]


@pytest.fixture(params=["v2", "v1"])
def module(request):
  return ec if request.param == "v2" else v1


def _specs(spec):
  return {key: (value.shape, value.dtype, value.default_value)
          for key, value in spec.items()}


def test_classifier_spec_adds_the_label_and_the_weight(module):
  spec = module.classifier_parse_example_spec(_COLUMNS, "y", weight_column="w")
  assert _specs(spec) == {"x": ((2,), tf.float32, None),
                          "y": ((1,), tf.int64, None),
                          "w": ((1,), tf.float32, None)}


def test_regressor_spec_takes_the_label_dimension_and_a_weight_column(module):
  spec = module.regressor_parse_example_spec(
      _COLUMNS, "y", label_dimension=3, label_default=0.0,
      weight_column=tf.feature_column.numeric_column("w", dtype=tf.float64))
  assert _specs(spec) == {"x": ((2,), tf.float32, None),
                          "y": ((3,), tf.float32, 0.0),
                          "w": ((1,), tf.float64, None)}


def test_no_weight_column_adds_only_the_label(module):
  spec = module.regressor_parse_example_spec(_COLUMNS, "y")
  assert sorted(spec) == ["x", "y"]


@pytest.mark.parametrize("label, weight, error", [
    ("x", None, "label should not be used as feature. label_key: x, "
     "features: dict_keys(['x']). Fix: remove the label from "
     "feature_columns."),
    ("y", "x", "weight_column should not be used as feature. weight_column: "
     "x, features: dict_keys(['x', 'y']). Fix: remove the weight from "
     "feature_columns."),
    ("y", 5, "weight_column should be an instance of "
     "tf.feature_column.numeric_column. Given type: <class 'int'> value: 5. "
     "Fix: pass the weight feature's name or a numeric_column."),
])
def test_a_label_or_weight_among_the_features_is_refused(
    module, label, weight, error):
  with pytest.raises(ValueError) as raised:
    module.classifier_parse_example_spec(_COLUMNS, label, weight_column=weight)
  assert str(raised.value) == error
