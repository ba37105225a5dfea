"""migration/batches.py: the batches a side fed its model_fn, stored and replayed.

A migration check replays the recorded batches on both sides, so a replay
that reorders, merges or splits a batch would make the sides disagree for a
reason that is not the program's. Small numpy data, eager tf.data; well under
a second each.
"""

import numpy as np
import pytest
import tensorflow as tf

from migration import batches as batches_lib


def _batch(start, rows, width=2):
  features = {"x": np.arange(start, start + rows * width,
                             dtype=np.float32).reshape(rows, width)}
  labels = np.arange(start, start + rows, dtype=np.int64)
  return features, labels


def _read(input_fn):
  return [tf.nest.map_structure(lambda t: t.numpy(), element)
          for element in input_fn()]


def _assert_same(got, want):
  assert len(got) == len(want)
  for one, other in zip(got, want):
    tf.nest.assert_same_structure(one, other)
    for a, b in zip(tf.nest.flatten(one), tf.nest.flatten(other)):
      np.testing.assert_array_equal(a, b)


def test_flatten_and_unflatten_give_back_the_batches_of_one_name():
  train = [_batch(0, 3), _batch(10, 3), (np.ones((1, 2)), None)]
  arrays = batches_lib.flatten(train, "train")
  arrays.update(batches_lib.flatten([_batch(99, 1)], "eval"))
  assert sorted(k for k in arrays if k.startswith("train/00002")) == [
      "train/00002/f"]
  back = batches_lib.unflatten(arrays, "train")
  assert [labels is None for _, labels in back] == [False, False, True]
  _assert_same([b for b in back if b[1] is not None], train[:2])
  np.testing.assert_array_equal(back[2][0], train[2][0])
  _assert_same(batches_lib.unflatten(arrays, "eval"), [_batch(99, 1)])


def test_even_batches_are_replayed_in_order_with_a_smaller_last_one():
  recorded = [_batch(0, 4), _batch(100, 4), _batch(200, 2)]
  _assert_same(_read(batches_lib.replay_input_fn(recorded)), recorded)


def test_uneven_batches_are_replayed_as_they_were():
  # A smaller batch in the middle cannot come from rows.batch(size): each
  # batch is its own element, in order.
  recorded = [_batch(0, 4), _batch(100, 2), _batch(200, 4)]
  _assert_same(_read(batches_lib.replay_input_fn(recorded)), recorded)


def test_features_only_when_labels_are_not_wanted():
  recorded = [_batch(0, 2), _batch(50, 2)]
  got = _read(batches_lib.replay_input_fn(recorded, with_labels=False))
  _assert_same(got, [features for features, _ in recorded])


def test_each_replica_reads_its_half_of_the_recorded_batch():
  recorded = [_batch(0, 4), _batch(100, 4)]
  got = _read(batches_lib.replay_input_fn(recorded, replicas=2))
  assert [len(labels) for _, labels in got] == [2, 2, 2, 2]
  np.testing.assert_array_equal(np.concatenate([l for _, l in got]),
                                np.concatenate([l for _, l in recorded]))


def test_a_batch_that_does_not_split_across_replicas_is_refused():
  with pytest.raises(ValueError, match=r"\(3 rows\) do not split evenly "
                     r"across 2 replicas.*Fix: use a batch size divisible"):
    batches_lib.replay_input_fn([_batch(0, 3), _batch(9, 3)], replicas=2)
  with pytest.raises(ValueError, match="do not split evenly"):
    batches_lib.replay_input_fn([_batch(0, 4), _batch(9, 2), _batch(20, 4)],
                                replicas=2)


def test_first_features():
  recorded = [_batch(7, 2), _batch(9, 2)]
  assert batches_lib.first_features(recorded) is recorded[0][0]
  assert batches_lib.first_features([]) is None
