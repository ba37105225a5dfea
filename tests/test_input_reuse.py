"""An input_fn's Dataset import is reused only where nothing keeps state.

The function engine imports the Dataset an input_fn built (in a graph, as
the Estimator built it) into a function. A later call whose input_fn built
the same subgraph reuses that function; a subgraph with a stateful kernel
(a seeded random op in a map function, a lookup table) is imported anew,
since the Estimator started every call from a new graph.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.engines.function import graph_input


def _model_fn(features, labels, mode):
  del labels
  w = tf.compat.v1.get_variable("w", [], initializer=tf.ones_initializer())
  return tfe.EstimatorSpec(mode, predictions={"x": features["x"] * w})


def _predict(tmp_path, input_fn):
  estimator = tfe.Estimator(_model_fn, str(tmp_path))
  return np.concatenate([p["x"] for p in estimator.predict(
      input_fn, yield_single_examples=False)])


@pytest.fixture
def imports(monkeypatch):
  """Counts the imports (wrap_function calls) of input Datasets."""
  monkeypatch.setattr(graph_input, "_IMPORTED", type(graph_input._IMPORTED)())  # pylint: disable=protected-access
  monkeypatch.setattr(graph_input, "_WHOLE", type(graph_input._WHOLE)())  # pylint: disable=protected-access
  calls = []
  wrap = tf.compat.v1.wrap_function

  def counted(*args, **kwargs):
    calls.append(1)
    return wrap(*args, **kwargs)

  monkeypatch.setattr(tf.compat.v1, "wrap_function", counted)
  return calls


def test_the_same_dataset_is_imported_once(tmp_path, imports):
  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        {"x": np.arange(6, dtype=np.float32)}).shuffle(6, seed=1).batch(4)

  first = _predict(tmp_path, input_fn)
  second = _predict(tmp_path, input_fn)
  assert len(imports) == 1
  np.testing.assert_array_equal(first, second)
  assert sorted(first) == list(range(6))


def test_the_same_whole_input_graph_is_found_without_extracting(
    tmp_path, imports, monkeypatch):
  # A later call that built the very same input graph finds its import by
  # that graph's bytes: no subgraph extracted (and serialized) again.
  extracted = []
  extract = tf.compat.v1.graph_util.extract_sub_graph
  monkeypatch.setattr(tf.compat.v1.graph_util, "extract_sub_graph",
                      lambda *a, **k: extracted.append(1) or extract(*a, **k))

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        {"x": np.arange(6, dtype=np.float32)}).batch(4)

  def other_input_fn():  # Another whole graph, the same Dataset subgraph.
    tf.constant(1.0, name="unused")
    return input_fn()

  first = _predict(tmp_path, input_fn)
  second = _predict(tmp_path, input_fn)
  assert len(extracted) == 1
  third = _predict(tmp_path, other_input_fn)
  assert len(extracted) == 2 and len(imports) == 1
  np.testing.assert_array_equal(first, second)
  np.testing.assert_array_equal(first, third)


def test_a_whole_graph_with_other_values_is_not_taken_for_a_kept_one(
    tmp_path, imports):
  # Same sizes, same ops, one value changed: the whole graph's bytes differ
  # in one float, so the call imports its own Dataset and reads that value.
  values = np.arange(6, dtype=np.float32)

  def input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": values.copy()}).batch(4)

  first = _predict(tmp_path, input_fn)
  values[5] = -0.0
  second = _predict(tmp_path, input_fn)
  values[5] = 0.0
  third = _predict(tmp_path, input_fn)
  assert first.tolist() == [0, 1, 2, 3, 4, 5]
  assert second.tolist()[:5] == [0, 1, 2, 3, 4] and second[5] == 0
  assert np.signbit(second[5]) and not np.signbit(third[5])
  assert len(imports) == 3


def test_whole_graphs_kept_are_bounded_newest_first(
    tmp_path, imports, monkeypatch):
  # Over the byte budget only the newest whole graph stays; an older one is
  # still found by its Dataset subgraph (extracted again, not imported).
  monkeypatch.setattr(graph_input, "_WHOLE_BYTES", 1)
  extracted = []
  extract = tf.compat.v1.graph_util.extract_sub_graph
  monkeypatch.setattr(tf.compat.v1.graph_util, "extract_sub_graph",
                      lambda *a, **k: extracted.append(1) or extract(*a, **k))

  def input_fn(scale):
    return lambda: tf.data.Dataset.from_tensor_slices(
        {"x": np.arange(4, dtype=np.float32) * scale}).batch(4)

  for scale in (1, 2, 1):
    _predict(tmp_path, input_fn(scale))
  assert len(graph_input._WHOLE) == 1  # pylint: disable=protected-access
  assert (len(extracted), len(imports)) == (3, 2)
  _predict(tmp_path, input_fn(1))  # The newest: found whole.
  assert (len(extracted), len(imports)) == (3, 2)
  monkeypatch.setattr(graph_input, "_WHOLE_BYTES", 1 << 30)
  for scale in range(3, 3 + graph_input._WHOLE_MAX + 2):  # pylint: disable=protected-access
    _predict(tmp_path, input_fn(scale))
  assert len(graph_input._WHOLE) == graph_input._WHOLE_MAX  # pylint: disable=protected-access


def test_a_seeded_random_op_restarts_each_call(tmp_path, imports):
  # Both builds give the same subgraph; reusing its function would continue
  # RandomUniform's stream, which lives in the function's kernel.
  def input_fn():
    return tf.data.Dataset.from_tensors(
        {"x": tf.random.uniform([4], seed=3)})

  first = _predict(tmp_path, input_fn)
  second = _predict(tmp_path, input_fn)
  assert len(imports) == 2
  np.testing.assert_array_equal(first, second)
  assert len(set(first.tolist())) == 4


def test_a_vocabulary_file_is_read_again_each_call(tmp_path, imports):
  vocab = tmp_path / "vocab.txt"

  def input_fn():
    table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(vocab), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    words = tf.constant(["a", "b", "c"])
    return tf.data.Dataset.from_tensors(
        {"x": tf.cast(table.lookup(words), tf.float32)})

  vocab.write_text("a\nb\nc\n")
  first = _predict(tmp_path / "model", input_fn)
  vocab.write_text("c\nb\na\n")
  second = _predict(tmp_path / "model", input_fn)
  assert first.tolist() == [0, 1, 2]
  assert second.tolist() == [2, 1, 0]


def _train_model_fn(features, labels, mode):
  w = tf.compat.v1.get_variable("w", [], initializer=tf.ones_initializer())
  loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _train_twice(model_dir, input_fn):
  estimator = tfe.Estimator(_train_model_fn, str(model_dir))
  estimator.train(input_fn, steps=3)
  estimator.train(input_fn, steps=3)
  return tf.train.load_checkpoint(str(model_dir)).get_tensor("w")


def test_training_reuses_the_import(tmp_path, imports):
  # A TRAIN input graph also holds the global-step read's cond, whose
  # branch functions (a ReadVariableOp) no Dataset op calls: they do not
  # keep the import from being reused.
  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        ({"x": np.arange(8, dtype=np.float32)},
         np.arange(8, dtype=np.float32))).repeat().batch(2)

  reused = _train_twice(tmp_path / "a", input_fn)
  assert len(imports) == 1
  graph_input._IMPORTED.clear()  # pylint: disable=protected-access
  estimator = tfe.Estimator(_train_model_fn, str(tmp_path / "b"))
  estimator.train(input_fn, steps=3)
  graph_input._IMPORTED.clear()  # pylint: disable=protected-access
  estimator.train(input_fn, steps=3)
  assert len(imports) == 3
  fresh = tf.train.load_checkpoint(str(tmp_path / "b")).get_tensor("w")
  assert reused.tobytes() == fresh.tobytes()


def test_a_training_import_is_keyed_by_its_subgraph_only(tmp_path, imports):
  # A TRAIN graph's whole digest could never match (its global-step read's
  # cond functions take a process-wide counter in their names): it is not
  # computed, and the import is kept under its subgraph's key alone.
  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        ({"x": np.arange(8, dtype=np.float32)},
         np.arange(8, dtype=np.float32))).repeat().batch(2)

  _train_twice(tmp_path, input_fn)
  assert len(imports) == 1 and len(graph_input._IMPORTED) == 1  # pylint: disable=protected-access
  assert not graph_input._WHOLE  # pylint: disable=protected-access


def test_a_random_op_in_a_map_function_keeps_training_imports_apart(
    tmp_path, imports):
  # The map function is called by the MapDataset op (an attr), so its
  # stateful random op counts: each call imports anew.
  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        ({"x": np.arange(8, dtype=np.float32)},
         np.arange(8, dtype=np.float32))).map(
             lambda f, l: ({"x": f["x"] + tf.random.uniform([], seed=3)}, l)
         ).repeat().batch(2)

  _train_twice(tmp_path, input_fn)
  assert len(imports) == 2
