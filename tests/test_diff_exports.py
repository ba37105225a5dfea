"""migration.diff.exports on small SavedModels: how exports pair, how
signatures and outputs are compared (tests/test_migration_diff.py runs it
on whole model_dirs)."""

import os

import numpy as np
import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.protobuf import saved_model_pb2

from migration.diff import exports


def _touch(path):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  open(path, "wb").close()


def test_exports_pair_by_rank_and_skip_temporary_dirs(tmp_path):
  for rel in ("export/best/1700000009/saved_model.pb",
              "export/best/1700000010/saved_model.pb",
              "export/best/temp-1700000011/saved_model.pb",
              "export/named/saved_model.pbtxt",
              "1600000000/saved_model.pb",
              "export/best/1700000012/variables/other.pb"):
    _touch(str(tmp_path / rel))
  found = exports.exports(str(tmp_path))
  assert found == {
      "#1": str(tmp_path / "1600000000"),
      "export/best/#1": str(tmp_path / "export/best/1700000009"),
      "export/best/#2": str(tmp_path / "export/best/1700000010"),
      "export/named": str(tmp_path / "export/named"),
  }


def test_example_inputs_are_given_or_generated_the_same_way():
  spec = {"f": ("float32", [-1, 3]), "i": ("int64", [4]),
          "b": ("bool", [-1]), "s": ("string", None), "g": ("float64", [1])}
  given = {"g": [[7.0]]}
  first = exports.example_inputs(spec, given)
  again = exports.example_inputs(spec, given)
  assert sorted(first) == ["b", "f", "g", "i", "s"]
  for key in first:
    np.testing.assert_array_equal(first[key], again[key])
  assert first["f"].shape == (exports.BATCH, 3)
  assert first["f"].dtype == np.float32
  assert first["i"].dtype == np.int64 and set(first["i"]) <= {0, 1, 2}
  assert first["b"].tolist() == [True, False]
  assert first["s"].tolist() == [b"", b""]  # unknown rank: one batch dim
  assert first["g"].tolist() == [[7.0]]  # from the examples, as given


def test_signature_differences():
  old = {"method": "tensorflow/serving/predict",
         "inputs": {"x": ("float32", [-1, 2]), "y": ("int64", [-1])},
         "outputs": {"p": ("float32", [-1])}}
  new = {"method": "tensorflow/serving/regress",
         "inputs": {"x": ("float64", [-1, 3]), "z": ("int64", [-1])},
         "outputs": {"p": ("float32", [-1])}}
  found = exports._compare_signature("serve/s", old, new)  # pylint: disable=protected-access
  assert [(d.kind, d.where, d.detail) for d in found] == [
      ("signature", "serve/s", "method old tensorflow/serving/predict vs new "
       "tensorflow/serving/regress"),
      ("signature", "serve/s", "inputs keys old ['x', 'y'] vs new "
       "['x', 'z']"),
      ("signature", "serve/s: inputs[x]", "dtype old float32 vs new float64"),
      ("signature", "serve/s: inputs[x]", "shape old [-1, 2] vs new [-1, 3]"),
  ]
  assert not exports._compare_signature("serve/s", old, old)  # pylint: disable=protected-access


class _Model(tf.Module):
  """Doubles its input; `fail` makes it refuse inputs over -100."""

  def __init__(self, fail=False, extra=False):
    super().__init__()
    self.scale = tf.Variable(2.0)
    self.fail = fail
    self.extra = extra

  @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
  def double(self, x):
    if self.fail:
      tf.debugging.assert_less(x, -100.0, message="too big")
    return {"y": x * self.scale}


def _save(path, as_text=False, **kwargs):
  model = _Model(**kwargs)
  export = os.path.join(path, "export", "1700000000")
  signatures = {"serving_default": model.double.get_concrete_function()}
  if model.extra:
    signatures["extra"] = model.double.get_concrete_function()
  tf.saved_model.save(model, export, signatures=signatures)
  if as_text:
    proto = saved_model_pb2.SavedModel()
    with open(os.path.join(export, "saved_model.pb"), "rb") as f:
      proto.ParseFromString(f.read())
    os.remove(os.path.join(export, "saved_model.pb"))
    with open(os.path.join(export, "saved_model.pbtxt"), "w") as f:
      f.write(text_format.MessageToString(proto))
  return export


def test_compare_outputs_and_errors(tmp_path):
  old = str(tmp_path / "old")
  _save(old)
  text = str(tmp_path / "text")
  # The same model in text form, a second signature and one more export.
  _save(text, as_text=True, extra=True)
  _touch(str(tmp_path / "text/export/1700000001/saved_model.pb"))
  assert exports.signatures(os.path.join(text, "export", "1700000000")) == {
      "serve/extra": {"method": "tensorflow/serving/predict",
                      "inputs": {"x": ("float32", None)},
                      "outputs": {"y": ("float32", None)}},
      "serve/serving_default": {"method": "tensorflow/serving/predict",
                                "inputs": {"x": ("float32", None)},
                                "outputs": {"y": ("float32", None)}}}
  found, both = exports.compare(old, text, 1e-6, 1e-6)
  assert both == 1
  assert [(d.kind, d.where) for d in found] == [
      ("export_missing", "export/#2"),
      ("signature", "export/#1: serve/extra")]
  assert found[0].detail == ("exported on the new side only "
                             "(export/1700000001)")
  assert found[1].detail == "signature on the new side only"

  failing = str(tmp_path / "failing")
  _save(failing, fail=True)
  found, _ = exports.compare(old, failing, 1e-6, 1e-6)
  assert [(d.kind, d.where) for d in found] == [
      ("export_output", "export/#1: serve/serving_default")]
  assert found[0].detail.startswith("old ran vs new InvalidArgumentError: ")
  # Both sides refusing the inputs the same way is no difference.
  assert exports.compare(failing, failing, 1e-6, 1e-6) == ([], 1)
