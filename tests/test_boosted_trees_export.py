"""BoostedTrees SavedModel export checked against tensorflow-estimator 2.8's
(tools/record_boosted_trees_export.py, TF 2.8.4).

From the checkpoint 2.8 exported, ours exports the same signatures (names,
method names, input and output keys, dtypes, shapes) whose outputs on the
same 40 examples are 2.8's; the SavedModel holds only ops with kernels on
this TensorFlow (no BoostedTrees op, no py_func), loads with
tf.saved_model.load and serves what estimator.predict gives.
"""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.framework import kernels

from estimator_compat.canned.boosted_trees import inference
from estimator_compat.canned.boosted_trees import tree_graph
from migration import program as program_lib
from tests.golden_programs import _boosted_trees_data as data
from tests.golden_programs import _boosted_trees_export as export_data

GOLDENS = os.path.join(os.path.dirname(__file__), "boosted_trees_goldens")
MODELS = ("classifier", "regressor", "multiclass")


def _estimator(name, tmp_path):
  """Our estimator of `name`, its columns and labels, in a model_dir
  holding the checkpoint 2.8 exported from."""
  tf_module = program_lib.tensorflow_with_estimator(real_if_installed=False)
  build, columns, labels = export_data.models(tf_module)[name]
  model_dir = str(tmp_path / "model")
  shutil.copytree(os.path.join(GOLDENS, "export", name, "ckpt"), model_dir)
  return tf_module, build(model_dir), columns, labels


def _kernel_less_ops(export_dir: str):
  """Ops of the SavedModel's graphs (functions too) without a kernel here,
  and py_funcs, which do not survive the exporting process."""
  model = saved_model_pb2.SavedModel()
  with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
    model.ParseFromString(f.read())
  missing = set()
  for meta_graph in model.meta_graphs:
    nodes = list(meta_graph.graph_def.node)
    for function in meta_graph.graph_def.library.function:
      nodes.extend(function.node_def)
    functions = {f.signature.name
                 for f in meta_graph.graph_def.library.function}
    for node in nodes:
      if node.op in functions:
        continue
      if (node.op.startswith(("PyFunc", "EagerPyFunc", "BoostedTrees"))
          or not kernels.get_registered_kernels_for_op(node.op).kernel):
        missing.add(node.op)
  return missing


def _assert_outputs_equal(ours, golden, key):
  assert ours.dtype == golden.dtype or (ours.dtype.kind in "OSU"
                                        and golden.dtype.kind in "OSU"), key
  assert ours.shape == golden.shape, key
  if ours.dtype.kind == "f":
    # TF 2.21's sigmoid and softmax differ from 2.8's in the last bit.
    np.testing.assert_allclose(ours, golden, rtol=1e-6, atol=1e-7,
                               err_msg=key)
  else:
    np.testing.assert_array_equal(ours, golden, err_msg=key)


@pytest.mark.parametrize("name", MODELS)
def test_export_serves_what_2_8_exported(name, tmp_path):
  """Parsing and raw serving inputs: 2.8's signatures and outputs, only
  kernel-backed ops, and the outputs equal estimator.predict's."""
  tf_module, estimator, columns, labels = _estimator(name, tmp_path)
  with open(os.path.join(GOLDENS, "export", name, "signatures.json")) as f:
    golden_signatures = json.load(f)["signatures"]
  golden = dict(np.load(os.path.join(GOLDENS, "export", name,
                                     "outputs.npz"), allow_pickle=True))
  receivers = {"parsing": export_data.parsing_receiver_fn(tf_module,
                                                          columns),
               "raw": export_data.raw_receiver_fn(tf_module)}
  outputs = {}
  for export_name, receiver_fn in receivers.items():
    export_dir = estimator.export_saved_model(
        str(tmp_path / export_name), receiver_fn).decode()
    assert not _kernel_less_ops(export_dir)
    signatures = export_data.run_export(
        tf, export_dir, export_data.feeds(tf, export_name), outputs,
        export_name)
    assert signatures == golden_signatures[export_name]
  assert sorted(outputs) == sorted(k for k in golden
                                   if not k.startswith("predict/"))
  for key, value in outputs.items():
    _assert_outputs_equal(value, golden[key], key)
  predictions = list(estimator.predict(data.input_fns(labels)[2]))
  for key in predictions[0]:
    ours = np.stack([p[key] for p in predictions])
    _assert_outputs_equal(ours, golden[f"predict/{key}"], f"predict/{key}")
    served = outputs[f"raw/predict/{key}"]
    if key in ("logits", "predictions") or ours.dtype.kind != "f":
      np.testing.assert_array_equal(ours, served, err_msg=key)
    else:
      # The sigmoid's and softmax's last bit depends on the batch (7 here).
      np.testing.assert_allclose(ours, served, rtol=1e-6, atol=1e-7,
                                 err_msg=key)


def test_export_loads_with_tf_saved_model_load(tmp_path, monkeypatch):
  """The TF2 loader serves the SavedModel's signature (no estimator
  machinery involved): the logits 2.8's SavedModel gave. On the graph
  engine (the other tests export on the default one)."""
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "graph")
  tf_module, estimator, columns, _ = _estimator("classifier", tmp_path)
  export_dir = estimator.export_saved_model(
      str(tmp_path / "export"),
      export_data.parsing_receiver_fn(tf_module, columns)).decode()
  with tf.Graph().as_default() as graph, tf.compat.v1.Session() as session:
    tf.compat.v1.saved_model.load(session, ["serve"], export_dir)
    names = {op.name for op in graph.get_operations()}
    # 2.8's graph had the ensemble and quantile resources under these names
    # and its saveables named after their tensors.
    assert {"boosted_trees", "boosted_trees/QuantileAccumulator"} <= names
    assert sorted(s.name for s in tf.compat.v1.get_collection(
        tf.compat.v1.GraphKeys.SAVEABLE_OBJECTS)) == [
            "boosted_trees/QuantileAccumulator:0", "boosted_trees:0"]
  loaded = tf.saved_model.load(export_dir)
  assert sorted(loaded.signatures) == ["classification", "predict",
                                       "regression", "serving_default"]
  result = loaded.signatures["predict"](
      examples=tf.constant(list(export_data.serialized_examples(tf))))
  golden = np.load(os.path.join(GOLDENS, "export", "classifier",
                                "outputs.npz"), allow_pickle=True)
  np.testing.assert_array_equal(result["logits"].numpy(),
                                golden["parsing/predict/logits"])


def test_all_saved_models_and_exporters(tmp_path):
  """experimental_export_all_saved_models (PREDICT and EVAL) and a
  LatestExporter of train_and_evaluate export kernel-backed graphs; the
  EVAL graph's metrics run."""
  tf_module, estimator, columns, labels = _estimator("regressor", tmp_path)
  receiver = export_data.raw_receiver_fn(tf_module)

  eval_receiver_fn = (
      tf_module.estimator.experimental.build_raw_supervised_input_receiver_fn(
          {k: tf.constant(v) for k, v in data.FEATURES.items()},
          tf.constant(labels)))
  export_dir = estimator.experimental_export_all_saved_models(
      str(tmp_path / "all"), {tf_module.estimator.ModeKeys.PREDICT: receiver,
                              tf_module.estimator.ModeKeys.EVAL:
                                  eval_receiver_fn}).decode()
  assert not _kernel_less_ops(export_dir)
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    meta = tf.compat.v1.saved_model.load(session, ["eval"], export_dir)
    signature = meta.signature_def["eval"]
    assert sorted(signature.inputs) == ["age", "cls", "fare", "label"]
    feed = {signature.inputs[k].name: data.FEATURES.get(k, labels)
            for k in signature.inputs}
    session.run([signature.outputs[k].name for k in signature.outputs
                 if k.endswith("update_op")], feed)
    loss = session.run(signature.outputs["metrics/average_loss/value"].name)
  expected = estimator.evaluate(data.input_fns(labels)[1])["average_loss"]
  np.testing.assert_allclose(loss, expected, rtol=1e-6)
  exporter = tf_module.estimator.LatestExporter("latest", receiver)
  exported = exporter.export(estimator, str(tmp_path / "exporter"),
                             estimator.latest_checkpoint(), {}, True)
  assert not _kernel_less_ops(exported.decode() if isinstance(exported, bytes)
                              else exported)


@pytest.mark.parametrize("logits_dimension", [1, 3])
def test_graph_walk_matches_the_numpy_walk(logits_dimension):
  """tree_graph.predict gives inference.ensemble_logits' logits bit for
  bit on the exported ensembles (bucketized and categorical splits, scalar
  and vector leaves) and zeros for an empty ensemble."""
  names = ("classifier", "regressor") if logits_dimension == 1 else (
      "multiclass",)
  rng = np.random.RandomState(5)
  for name in names:
    reader = tf.train.load_checkpoint(os.path.join(GOLDENS, "export", name,
                                                   "ckpt"))
    serialized = reader.get_tensor("boosted_trees:0_serialized")
    num_features = 3 if name == "regressor" else 5
    features = [rng.randint(0, 5, size=(30, 1)).astype(np.int32)
                for _ in range(num_features)]
    for ensemble in (serialized, b""):
      graph_logits = tree_graph.predict(
          tf.constant(ensemble), [tf.constant(f) for f in features],
          logits_dimension).numpy()
      np.testing.assert_array_equal(
          graph_logits, inference.ensemble_logits(ensemble, features,
                                                  logits_dimension))


@pytest.mark.parametrize("engine", ["default", "graph"])
def test_predict_before_training_gives_the_empty_ensemble(engine, tmp_path,
                                                          monkeypatch):
  """As in 2.8: without a checkpoint predict() starts the ensemble and the
  boundaries empty (logits 0) instead of reading uninitialized variables."""
  if engine == "graph":
    monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "graph")
  tf_module = program_lib.tensorflow_with_estimator(real_if_installed=False)
  estimator = tf_module.estimator.BoostedTreesClassifier(
      data.columns(tf_module.feature_column), n_batches_per_layer=1,
      model_dir=str(tmp_path / "model"), n_trees=1, max_depth=2)
  predictions = list(estimator.predict(data.input_fns(data.BINARY)[2]))
  assert len(predictions) == data.N
  np.testing.assert_array_equal([p["logits"] for p in predictions],
                                np.zeros([data.N, 1], np.float32))
