"""The binary head's accuracy_baseline: the majority class's share."""

import numpy as np
import pytest

from estimator_compat.head.metric_objects import AccuracyBaseline


@pytest.mark.parametrize("labels, weights, expected", [
    ([1., 1., 0.], None, 2. / 3.),
    ([0., 0., 0., 1.], None, 0.75),
    ([1., 0.], [3., 1.], 0.75),
    ([0., 1.], [3., 1.], 0.75),
    ([1., 0.], [1., 1.], 0.5),
])
def test_the_baseline_is_the_larger_of_the_two_class_shares(
    labels, weights, expected):
  metric = AccuracyBaseline()
  metric.update_state(np.array(labels), sample_weight=weights)
  assert float(metric.result()) == pytest.approx(expected)


def test_no_examples_give_zero_not_nan():
  assert float(AccuracyBaseline().result()) == 0.0


def test_the_result_read_without_keras_wrapping():
  # Keras runs result() through tf.function (autograph), which coverage
  # cannot follow; the class's own method gives the same value eagerly.
  metric = AccuracyBaseline()
  metric.update_state(np.array([0., 1.]), sample_weight=[3., 1.])
  assert float(AccuracyBaseline.result(metric)) == pytest.approx(0.75)
