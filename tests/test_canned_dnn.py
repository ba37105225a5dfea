"""The DNN and wide & deep canned estimators: arguments, keys, strategies.

The numbers are checked against TF 2.15 by the goldens (tests/goldens/dnn_*,
test_goldens.py); these tests cover what goldens do not: argument errors,
the engines' routing of v1 training, and MirroredStrategy.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.distribute import sharded_variable

import estimator_compat as tfe
from estimator_compat import v1
from estimator_compat.engines.function import ps_training
from estimator_compat.errors import NeedsGraphEngine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _input_fn():
  x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(12, 2)
  y = np.array(["a", "b", "c"] * 4)
  return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(6)


def _columns():
  return [tf.feature_column.numeric_column("x", shape=(2,))]


def test_v2_classifier_keys_on_both_engines(engine, tmp_path):
  est = tfe.DNNClassifier([3], _columns(), model_dir=str(tmp_path),
                          n_classes=3, label_vocabulary=["a", "b", "c"],
                          dropout=0.1)
  est.train(_input_fn, steps=2)
  metrics = est.evaluate(_input_fn)
  assert sorted(metrics) == ["accuracy", "average_loss", "global_step",
                             "loss"]
  prediction = next(est.predict(lambda: _input_fn().map(lambda f, l: f)))
  assert sorted(prediction) == ["all_class_ids", "all_classes", "class_ids",
                                "classes", "logits", "probabilities"]
  assert prediction["classes"][0] in (b"a", b"b", b"c")
  names = est.get_variable_names()
  assert "training/Adagrad/dnn/hiddenlayer_0/kernel/accumulator" in names
  assert est.get_variable_value("global_step") == 2


def test_v1_training_needs_the_graph_engine_only_when_asked(tmp_path,
                                                            monkeypatch):
  monkeypatch.setenv("ESTIMATOR_COMPAT_ENGINE", "function")
  est = v1.DNNRegressor([2], _columns(), model_dir=str(tmp_path / "f"))
  labels = lambda: _input_fn().map(lambda f, l: (f, tf.ones([6])))
  with pytest.raises(NeedsGraphEngine, match="TF1 Session graph"):
    est.train(labels, steps=1)
  assert not os.path.exists(str(tmp_path / "f" / "checkpoint"))
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE")
  est = v1.DNNRegressor([2], _columns(), model_dir=str(tmp_path / "d"))
  est.train(labels, steps=2)  # The default engine trains on the graph one.
  assert "dnn/logits/kernel/t_0/Adagrad" in est.get_variable_names()
  assert est.evaluate(labels)["global_step"] == 2


def test_argument_errors_before_any_checkpoint(tmp_path):
  with pytest.raises(ValueError, match="Either linear_feature_columns or "
                     "dnn_feature_columns must be defined"):
    tfe.DNNLinearCombinedClassifier(model_dir=str(tmp_path))
  est = tfe.DNNLinearCombinedRegressor(model_dir=str(tmp_path),
                                       dnn_feature_columns=_columns())
  labels = lambda: _input_fn().map(lambda f, l: (f, tf.ones([6])))
  with pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
    est.train(labels, steps=1)
  est = tfe.DNNRegressor([2], _columns(), model_dir=str(tmp_path / "o"),
                         optimizer="Nope")
  with pytest.raises(ValueError, match="Unsupported optimizer name: Nope"):
    est.train(labels, steps=1)
  assert not os.path.exists(str(tmp_path / "o" / "checkpoint"))
  with pytest.raises(ValueError, match="TensorFlow v2 Estimator"):
    tfe.DNNRegressor([2], [_NotAV2Column()], model_dir=str(tmp_path / "c")
                     ).train(labels, steps=1)


class _NotAV2Column:
  """Stands for a column that is not a v2 feature column."""
  name = "x"


@pytest.mark.slow
def test_mirrored_two_replicas_train_like_one_device():
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("ESTIMATOR_COMPAT_ENGINE", None)
  done = subprocess.run(
      [sys.executable, os.path.join(ROOT, "tests",
                                    "canned_mirrored_program.py")],
      capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
      check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  line = [l for l in done.stdout.splitlines() if l.startswith("RESULTS ")]
  results = json.loads(line[0][len("RESULTS "):])
  assert results["step"] == 6
  # As in the Estimator's TF1 graph: the Keras optimizer's slots (made with
  # tf.Variable) are saved per replica, the layers' weights once (G9; TF
  # 2.15 could not resume a checkpoint without the replica_1 slots).
  slots = [n for n in results["names"] if n.endswith("/accumulator")]
  assert len(slots) == 4
  assert results["mirrored_names"] == sorted(
      results["names"] + [n + "/replica_1" for n in slots])
  assert results["worst"] < 1e-5


def test_python_tuple_labels_and_features(engine, tmp_path):
  # The Estimator's canned tests return labels as tuples of tuples; the
  # Estimator passed them on and the head made them tensors.
  def input_fn():
    return {"x": ((1.0, 2.0), (3.0, 4.0))}, ((5.0,), (3.0,))

  est = tfe.DNNRegressor([2], _columns(), model_dir=str(tmp_path))
  est.train(input_fn, steps=1)
  assert est.evaluate(input_fn, steps=1)["global_step"] == 1


def test_keras_slots_of_shards_are_saved_as_slices_of_the_full_slot():
  # Parameter-server training shards variables; a Keras optimizer names the
  # slot of shard K `training/Adagrad/<name>/part_K/accumulator`.
  shards = [tf.Variable(tf.zeros([3, 2])), tf.Variable(tf.zeros([2, 2]))]
  slots = {f"training/Adagrad/emb/part_{k}/accumulator": tf.Variable(
      tf.zeros(v.shape)) for k, v in enumerate(shards)}
  out = ps_training.variables_for_names(
      {"emb": sharded_variable.ShardedVariable(shards), **slots})
  info = out["training/Adagrad/emb/part_1/accumulator"]._save_slice_info  # pylint: disable=protected-access
  assert info.full_name == "training/Adagrad/emb/accumulator"
  assert info.full_shape == [5, 2]
  assert info.var_offset == [3, 0]
  assert out["emb/part_1"]._save_slice_info.full_name == "emb"  # pylint: disable=protected-access


def test_v1_partitioned_input_layer_resumes(tmp_path):
  # TF 2.15 saved the slots of 2 embedding partitions as slices
  # `.../embedding_weights/t_0/Adagrad` and `t_1/Adagrad` of full shape.
  fc = tf.compat.v1.feature_column
  columns = [fc.embedding_column(fc.categorical_column_with_identity(
      "id", 10), 4)]

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        ({"id": np.arange(8) % 10}, np.arange(8) % 2)).batch(4).repeat()

  est = v1.DNNClassifier(
      [3], columns, model_dir=str(tmp_path),
      input_layer_partitioner=tf.compat.v1.fixed_size_partitioner(2))
  est.train(input_fn, steps=2)
  prefix = ("dnn/input_from_feature_columns/input_layer/id_embedding/"
            "embedding_weights/")
  shapes = dict(tf.train.list_variables(str(tmp_path)))
  assert shapes[prefix + "t_1/Adagrad"] == [10, 4]
  assert est.evaluate(input_fn, steps=1)["global_step"] == 2
