"""predict(yield_single_examples=True) splits each batch as the Estimator did.

Example i of a batch is {key: value[i]} for every key, with the very
objects numpy indexing gives (a numpy scalar of a vector, a row view of a
matrix), in the batch's key order.
"""

import numpy as np
import pytest

from estimator_compat.engines import graph as graph_engine


def _by_index(batch):
  first = next(iter(batch.values()))
  return [{key: value[i] for key, value in batch.items()}
          for i in range(first.shape[0])]


@pytest.mark.parametrize("batch", [
    {"logits": np.arange(12, dtype=np.float32).reshape(4, 3)},
    {"class_ids": np.arange(4, dtype=np.int64)},
    {"z": np.arange(4.0), "a": np.array([b"p", b"q", b"r", b"s"]),
     "m": np.arange(24, dtype=np.int32).reshape(4, 3, 2)},
    {"only": np.zeros((0, 2))},
    {"x": np.zeros((0,)), "y": np.zeros((0, 3))},
], ids=["one-matrix", "one-vector", "three-keys", "empty-one", "empty-two"])
def test_each_example_is_every_keys_row_by_index(batch):
  got = list(graph_engine._single_examples(batch))  # pylint: disable=protected-access
  want = _by_index(batch)
  assert len(got) == len(want)
  for example, expected in zip(got, want):
    assert list(example) == list(batch)
    for key, value in expected.items():
      assert type(example[key]) is type(value)
      assert example[key].dtype == value.dtype
      np.testing.assert_array_equal(example[key], value)


def test_a_row_is_a_view_of_the_batch_as_indexing_gives():
  batch = {"a": np.arange(6.0).reshape(3, 2), "b": np.arange(3)}
  first = next(graph_engine._single_examples(batch))  # pylint: disable=protected-access
  assert np.shares_memory(first["a"], batch["a"])
  assert first["a"].base is batch["a"][0].base


def test_other_lengths_still_raise_the_estimators_error():
  batch = {"a": np.zeros((4, 2)), "b": np.zeros((3,))}
  with pytest.raises(ValueError, match="Batch length of predictions should "
                     "be same. b has different batch length than others"):
    list(graph_engine._single_examples(batch))  # pylint: disable=protected-access
