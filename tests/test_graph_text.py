"""graph.pbtxt is written as tf.io.write_graph writes it, formatted once."""

import os

import pytest
import tensorflow as tf

from estimator_compat.engines.function import graph_text


def _graph_def(scale: float):
  graph = tf.Graph()
  with graph.as_default():
    x = tf.constant([1.5, 2.0, 1e-7], name="x")
    tf.multiply(x, scale, name="y")
  return graph.as_graph_def(add_shapes=True)


def _read(path: str) -> bytes:
  with open(path, "rb") as f:
    return f.read()


def _tf_text(graph_def, directory: str) -> bytes:
  return _read(tf.io.write_graph(graph_def, directory, "graph.pbtxt"))


@pytest.fixture(autouse=True)
def _forget_last(monkeypatch):
  monkeypatch.setattr(graph_text, "_last", None)


def test_the_bytes_are_write_graphs_at_the_first_and_a_later_write(tmp_path):
  graph_def = _graph_def(3.25)
  expected = _tf_text(graph_def, str(tmp_path / "tf"))
  first = graph_text.write_graph_text(graph_def, str(tmp_path / "a"))
  again = graph_text.write_graph_text(graph_def, str(tmp_path / "b" / "c"))
  assert first == str(tmp_path / "a" / "graph.pbtxt")
  assert _read(first) == expected
  assert _read(again) == expected


def test_the_same_graph_is_formatted_once(tmp_path, monkeypatch):
  made = []
  text_of = graph_text._text_of  # pylint: disable=protected-access

  def counting(graph_def):
    made.append(1)
    return text_of(graph_def)

  monkeypatch.setattr(graph_text, "_text_of", counting)
  for _ in range(3):
    graph_text.write_graph_text(_graph_def(3.25), str(tmp_path))
  assert made == [1]


def test_another_graph_gets_its_own_text(tmp_path):
  a, b = _graph_def(3.25), _graph_def(4.5)
  path = graph_text.write_graph_text(a, str(tmp_path))
  assert _read(path) == _tf_text(a, str(tmp_path / "tf_a"))
  graph_text.write_graph_text(b, str(tmp_path))
  assert _read(path) == _tf_text(b, str(tmp_path / "tf_b"))
  assert _read(path) != _tf_text(a, str(tmp_path / "tf_a"))
  graph_text.write_graph_text(a, str(tmp_path))
  assert _read(path) == _tf_text(a, str(tmp_path / "tf_a"))


def test_a_file_changed_between_calls_is_written_again(tmp_path):
  graph_def = _graph_def(3.25)
  path = graph_text.write_graph_text(graph_def, str(tmp_path))
  with open(path, "wb") as f:
    f.write(b"edited")
  graph_text.write_graph_text(graph_def, str(tmp_path))
  assert _read(path) == _tf_text(graph_def, str(tmp_path / "tf"))


def test_nothing_is_left_in_the_in_memory_file_system(tmp_path):
  graph_text.write_graph_text(_graph_def(3.25), str(tmp_path))
  root = "ram://estimator_compat_graph_text"
  assert not tf.io.gfile.exists(root) or not tf.io.gfile.listdir(root)


def test_a_symlink_in_its_place_is_replaced_not_followed(tmp_path):
  outside = tmp_path / "outside.txt"
  outside.write_bytes(b"keep")
  model_dir = tmp_path / "model"
  model_dir.mkdir()
  os.symlink(outside, model_dir / "graph.pbtxt")
  graph_text.write_graph_text(_graph_def(3.25), str(model_dir))
  assert outside.read_bytes() == b"keep"
  assert not os.path.islink(model_dir / "graph.pbtxt")
