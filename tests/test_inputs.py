"""numpy_input_fn / pandas_input_fn: legacy arguments and batch order."""

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

import estimator_compat as tfe


def _batches(input_fn, limit=50):
  """Runs a graph-mode input_fn to exhaustion (or `limit` batches)."""
  out = []
  with tf.Graph().as_default():
    tensors = input_fn()
    with tf.compat.v1.Session() as session:
      for _ in range(limit):
        try:
          out.append(session.run(tensors))
        except tf.errors.OutOfRangeError:
          break
  return out


def test_unshuffled_batches_keep_legacy_order_across_epochs():
  x = {"a": np.arange(5, dtype=np.float32)}
  y = np.arange(5, dtype=np.int64) * 10
  batches = _batches(tfe.inputs.numpy_input_fn(x, y, batch_size=2,
                                               num_epochs=2, shuffle=False))
  assert [list(f["a"]) for f, _ in batches] == [[0, 1], [2, 3], [4, 0],
                                                [1, 2], [3, 4]]
  assert [list(labels) for _, labels in batches][0] == [0, 10]


def test_last_partial_batch_and_no_labels():
  batches = _batches(tfe.inputs.numpy_input_fn(
      {"a": np.arange(5)}, batch_size=4, num_epochs=1, shuffle=False))
  assert [list(b["a"]) for b in batches] == [[0, 1, 2, 3], [4]]


def test_repeat_forever_and_array_x_and_dict_y():
  x = np.arange(6, dtype=np.float32).reshape(3, 2)
  batches = _batches(tfe.inputs.numpy_input_fn(
      x, {"t": np.arange(3)}, batch_size=2, num_epochs=None, shuffle=False),
                     limit=7)
  assert len(batches) == 7
  features, labels = batches[1]
  np.testing.assert_array_equal(features, [[4, 5], [0, 1]])
  assert list(labels["t"]) == [2, 0]


def test_shuffle_permutes_each_epoch_reproducibly_with_seed():
  def run(seed):
    with tf.Graph().as_default() as graph:
      graph.seed = seed
      tensors = tfe.inputs.numpy_input_fn({"a": np.arange(10)}, batch_size=10,
                                          num_epochs=2, shuffle=True)()
      with tf.compat.v1.Session() as session:
        return [list(session.run(tensors)["a"]) for _ in range(2)]
  first = run(7)
  assert first == run(7)
  assert all(sorted(epoch) == list(range(10)) for epoch in first)
  assert first[0] != list(range(10))


def test_eager_call_returns_dataset():
  dataset = tfe.inputs.numpy_input_fn({"a": np.arange(3)}, np.arange(3),
                                      batch_size=2, shuffle=False)()
  assert isinstance(dataset, tf.data.Dataset)
  assert [list(f["a"].numpy()) for f, _ in dataset] == [[0, 1], [2]]


def test_numpy_input_fn_argument_errors():
  # The Estimator's exception types and wording first, then the fix.
  with pytest.raises(ValueError, match="shuffle must be provided and "
                     "explicitly set as boolean .*; got None. Fix: pass"):
    tfe.inputs.numpy_input_fn({"a": np.arange(3)})
  with pytest.raises(ValueError, match="Length of tensors in x and y is "
                     "mismatched"):
    tfe.inputs.numpy_input_fn({"a": np.arange(3)}, np.arange(4), shuffle=False)
  with pytest.raises(ValueError, match="1 duplicate keys are found in both "
                     "x and y"):
    tfe.inputs.numpy_input_fn({"a": np.arange(3)}, {"a": np.arange(3)},
                              shuffle=False)
  with pytest.raises(TypeError, match="x must be a dict or array; got list"):
    tfe.inputs.numpy_input_fn([1, 2], np.arange(2), shuffle=False)
  with pytest.raises(ValueError, match="x cannot be an empty dict"):
    tfe.inputs.numpy_input_fn({}, np.arange(2), shuffle=False)
  with pytest.raises(ValueError, match="x cannot be an empty array"):
    tfe.inputs.numpy_input_fn(np.array([[], []]), np.arange(2), shuffle=False)
  with pytest.raises(ValueError, match="y cannot be empty dict, use None"):
    tfe.inputs.numpy_input_fn({"a": np.arange(2)}, {}, shuffle=False)
  # known_differences.md, numpy-input-negative-counts.
  with pytest.raises(ValueError, match="num_epochs must be >= 0 or None"):
    tfe.inputs.numpy_input_fn({"a": np.arange(2)}, num_epochs=-1,
                              shuffle=False)
  with pytest.raises(ValueError, match="pandas_input_fn: batch_size must be "
                     "> 0"):
    tfe.inputs.pandas_input_fn(pd.DataFrame({"a": [1]}), batch_size=0,
                               shuffle=False)


def test_zero_epochs_give_no_batch():
  # As the Estimator's queue: num_epochs=0 is accepted and ends at once.
  assert _batches(tfe.inputs.numpy_input_fn(
      {"a": np.arange(4)}, np.arange(4), num_epochs=0, shuffle=False)) == []


def test_pandas_label_columns_may_repeat_feature_columns():
  frame = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})
  target = pd.DataFrame({"a": [10, 11, 12], "b": [50, 51, 52]})
  features, labels = _batches(tfe.inputs.pandas_input_fn(
      frame, target, batch_size=2, shuffle=False))[0]
  assert list(features["a"]) == [1, 2] and list(features["b"]) == [4, 5]
  assert list(labels["a"]) == [10, 11] and list(labels["b"]) == [50, 51]


def test_pandas_input_fn_argument_errors():
  frame = pd.DataFrame({"a": [1, 2]})
  target = pd.Series([0, 1])
  with pytest.raises(TypeError, match="target_column must be a string type"):
    tfe.inputs.pandas_input_fn(frame, target, shuffle=False,
                               target_column=["a"])
  with pytest.raises(ValueError, match="shuffle must be provided and "
                     "explicitly set as boolean"):
    tfe.inputs.pandas_input_fn(frame, target)
  with pytest.raises(ValueError, match="Index for x and y are mismatched"):
    tfe.inputs.pandas_input_fn(frame, pd.Series([0, 1], index=[5, 6]),
                               shuffle=False)


def test_pandas_input_fn_drops_index_and_feeds_columns():
  frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [4, 5, 6]},
                       index=[10, 11, 12])
  target = pd.Series([0, 1, 0], index=[10, 11, 12])
  batches = _batches(tfe.inputs.pandas_input_fn(frame, target, batch_size=2,
                                                shuffle=False))
  features, labels = batches[0]
  assert sorted(features) == ["a", "b"]
  assert list(features["b"]) == [4, 5] and list(labels) == [0, 1]
  assert len(batches) == 2
  with pytest.raises(ValueError, match="Cannot use name a for target "
                     "column: DataFrame already has a column with that name"):
    tfe.inputs.pandas_input_fn(frame, target, shuffle=False,
                               target_column="a")
  with pytest.raises(TypeError, match="DataFrame"):
    tfe.inputs.pandas_input_fn({"a": [1]}, shuffle=False)


def test_eager_shuffle_uses_the_global_seed_as_a_graph_its_seed():
  def graph_order(seed):
    with tf.Graph().as_default() as graph:
      graph.seed = seed
      tensors = tfe.inputs.numpy_input_fn({"a": np.arange(10)}, batch_size=10,
                                          num_epochs=1, shuffle=True)()
      with tf.compat.v1.Session() as session:
        return list(session.run(tensors)["a"])

  def eager_order(seed):
    tf.random.set_seed(seed)
    try:
      dataset = tfe.inputs.numpy_input_fn({"a": np.arange(10)}, batch_size=10,
                                          num_epochs=1, shuffle=True)()
    finally:
      tf.random.set_seed(None)
    return [list(f["a"].numpy()) for f in dataset][0]

  # The function engine (eager input_fn under tf_random_seed) feeds what the
  # graph engine feeds.
  assert eager_order(7) == graph_order(7) != list(range(10))
