"""numpy_input_fn's argument checks and batching (inputs/numpy_io.py).

The error wording before our "Fix:" sentence is what the real
tf.compat.v1.estimator.inputs.numpy_input_fn (TF 2.15) raised for the same
arguments (its x/y length message names an array x '__direct_np_input__'
and an array y by its shape).
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.inputs import numpy_input_fn
from estimator_compat.inputs.numpy_io import _batch_indices

_MISMATCH = ("Length of tensors in x and y is mismatched. All elements in x "
             "and y must have the same length.\n")


@pytest.mark.parametrize("x, y, shapes", [
    (np.arange(4.0), np.arange(3.0),
     "Shapes in x: {'__direct_np_input__': (4,)}\nShapes in y: (3,)\n"),
    ({"a": np.arange(4.0)}, {"l": np.arange(3.0), "m": np.arange(3.0)},
     "Shapes in x: {'a': (4,)}\nShapes in y: {'l': (3,), 'm': (3,)}\n"),
    ({"a": np.arange(4.0), "b": np.arange(3.0)}, None,
     "Shapes in x: {'a': (4,), 'b': (3,)}\nShapes in y: None\n"),
])
def test_rows_of_different_lengths_name_every_shape(x, y, shapes):
  with pytest.raises(ValueError) as raised:
    numpy_input_fn(x, y, shuffle=False)
  assert str(raised.value).startswith(_MISMATCH + shapes), str(raised.value)
  assert "Fix: give every feature and label array the same number of rows." in (
      str(raised.value))


@pytest.mark.parametrize("kwargs, error, words", [
    ({"x": {}}, ValueError, "x cannot be an empty dict"),
    ({"x": np.zeros([0])}, ValueError, "x cannot be an empty array"),
    ({"x": [1.0]}, TypeError, "x must be a dict or array; got list"),
    ({"x": {"a": np.arange(2.0)}, "y": {}}, ValueError,
     "y cannot be empty dict, use None instead."),
    ({"x": {"a": np.arange(2.0)}, "y": {"a": np.arange(2.0)}}, ValueError,
     "1 duplicate keys are found in both x and y: {'a'}"),
    ({"x": np.arange(2.0), "shuffle": None}, ValueError,
     "shuffle must be provided and explicitly set as boolean (it is "
     "recommended to set it as True for training); got None"),
    ({"x": np.arange(2.0), "batch_size": 0}, ValueError,
     "numpy_input_fn: batch_size must be > 0, got 0."),
    ({"x": np.arange(2.0), "num_epochs": -1}, ValueError,
     "numpy_input_fn: num_epochs must be >= 0 or None (repeat forever), got "
     "-1."),
])
def test_bad_arguments_are_refused_when_the_input_fn_is_made(kwargs, error,
                                                             words):
  kwargs.setdefault("shuffle", False)
  with pytest.raises(error) as raised:
    numpy_input_fn(**kwargs)
  assert str(raised.value).startswith(words), str(raised.value)


def test_an_array_x_with_a_dict_y():
  input_fn = numpy_input_fn(np.arange(3.0), {"label": np.arange(3.0)},
                            batch_size=2, shuffle=False)
  features, labels = next(iter(input_fn()))
  np.testing.assert_array_equal(features.numpy(), [0.0, 1.0])
  np.testing.assert_array_equal(labels["label"].numpy(), [0.0, 1.0])


def test_features_alone_without_y():
  input_fn = numpy_input_fn({"a": np.arange(3.0)}, batch_size=2,
                            shuffle=False)
  batches = [batch["a"].numpy().tolist() for batch in input_fn()]
  assert batches == [[0.0, 1.0], [2.0]]


def test_batches_run_across_epochs_and_keep_the_last_partial_one():
  batches = [rows.tolist() for rows in _batch_indices(4, 3, 2, False, None)]
  assert batches == [[0, 1, 2], [3, 0, 1], [2, 3]]
  assert not list(_batch_indices(4, 3, 0, False, None))


def test_shuffled_epochs_are_seeded_permutations():
  first = [rows.tolist() for rows in _batch_indices(5, 5, 2, True, 7)]
  again = [rows.tolist() for rows in _batch_indices(5, 5, 2, True, 7)]
  assert first == again and len(first) == 2
  assert all(sorted(rows) == [0, 1, 2, 3, 4] for rows in first)
  assert first != [[0, 1, 2, 3, 4]] * 2


def test_no_epoch_limit_repeats_forever():
  endless = _batch_indices(2, 3, None, False, None)
  assert [next(endless).tolist() for _ in range(3)] == [
      [0, 1, 0], [1, 0, 1], [0, 1, 0]]


def test_in_a_graph_the_input_fn_returns_tensors():
  with tf.Graph().as_default():
    features, labels = numpy_input_fn(
        {"a": np.arange(3.0)}, np.arange(3), batch_size=3, shuffle=False)()
    with tf.compat.v1.Session() as session:
      got_features, got_labels = session.run((features, labels))
  np.testing.assert_array_equal(got_features["a"], [0.0, 1.0, 2.0])
  np.testing.assert_array_equal(got_labels, [0, 1, 2])
