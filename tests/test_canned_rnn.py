"""The canned RNN estimators: argument checks, the sequential head, the TF1
export method and module paths (training itself: the rnn_* goldens)."""

import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.canned import rnn
from estimator_compat.head import sequential_head


def _columns():
  tokens = tf.feature_column.sequence_categorical_column_with_identity(
      "tokens", 4)
  return [tf.feature_column.embedding_column(tokens, 2)]


def _input_fn():
  tokens = tf.sparse.SparseTensor(
      indices=[[0, 0], [0, 1], [1, 0]], values=tf.constant([1, 2, 3],
                                                           tf.int64),
      dense_shape=[2, 2])
  return {"tokens": tokens}, tf.constant([[1], [0]])


def test_rnn_cell_fn_with_units_is_refused():
  with pytest.raises(ValueError, match="units and cell_type must not be"):
    rnn.RNNClassifier(_columns(), units=[2], rnn_cell_fn=lambda: None)


def test_return_sequences_needs_a_sequential_head():
  with pytest.raises(ValueError, match="must be a `_SequentialHead`"):
    rnn.RNNEstimator(head=tfe.BinaryClassHead(),
                     sequence_feature_columns=_columns(), units=[2],
                     return_sequences=True)


def test_classifier_with_sequences_wraps_its_head():
  estimator = rnn.RNNClassifier(_columns(), units=[2], return_sequences=True,
                                weight_column="w", sequence_mask="m")
  assert estimator.config is not None  # built without training
  head = sequential_head.SequentialHeadWrapper(
      tfe.BinaryClassHead(), sequence_length_mask="m", feature_columns="w")
  assert head.input_sequence_mask_key == "m"
  assert head.name is None and head.logits_dimension == 1


@pytest.mark.parametrize("kwargs,error", [
    ({"sequence_length_mask": 3}, "`sequence_mask` column must be a string"),
    ({"feature_columns": [1]}, "Column must a string"),
])
def test_sequential_head_refuses_non_string_keys(kwargs, error):
  with pytest.raises(TypeError, match=error):
    sequential_head.SequentialHeadWrapper(tfe.BinaryClassHead(), **kwargs)


def test_sequential_head_refuses_a_multi_head():
  multi = tfe.MultiHead([tfe.BinaryClassHead(name="a"),
                         tfe.RegressionHead(name="b")])
  with pytest.raises(ValueError, match="`MultiHead` is not supported"):
    sequential_head.SequentialHeadWrapper(multi)


def test_sequential_loss_counts_only_unpadded_steps():
  head = sequential_head.SequentialHeadWrapper(
      tfe.RegressionHead(), sequence_length_mask="mask")
  logits = tf.constant([[[1.], [2.]], [[3.], [9.]]])
  labels = tf.constant([[0., 0.], [0., 0.]])
  mask = tf.constant([[True, True], [True, False]])
  loss = head.loss(logits=logits, labels=labels, features={"mask": mask},
                   mode=tfe.ModeKeys.EVAL)
  # (1 + 4 + 9) / 3 steps: the padded step (9) is left out.
  np.testing.assert_allclose(loss.numpy(), 14.0 / 3.0, rtol=1e-6)


def test_sequential_head_names_a_missing_mask():
  head = sequential_head.SequentialHeadWrapper(tfe.RegressionHead())
  with pytest.raises(ValueError, match="sequence_length_mask.*not found"):
    head.loss(logits=tf.zeros([1, 2, 1]), labels=tf.zeros([1, 2]),
              features={}, mode=tfe.ModeKeys.EVAL)


def test_export_savedmodel_keeps_default_attrs(engine, tmp_path):
  """TF 2.15's RNN estimators were TF1 Estimators: export_savedmodel."""
  del engine  # Parametrizes the engine.
  estimator = rnn.RNNClassifier(_columns(), units=[2],
                                model_dir=str(tmp_path / "model"))
  estimator.train(_input_fn, steps=1)
  spec = tf.feature_column.make_parse_example_spec(_columns())
  receiver_fn = tfe.export.build_parsing_serving_input_receiver_fn(spec)
  path = estimator.export_savedmodel(str(tmp_path / "export"), receiver_fn)
  assert isinstance(path, bytes)
  assert os.path.exists(os.path.join(path.decode(), "saved_model.pb"))
  loaded = tf.saved_model.load(path.decode())
  assert "serving_default" in loaded.signatures
  with pytest.raises(ValueError, match="An input_receiver_fn must be"):
    estimator.export_savedmodel(str(tmp_path / "export"), None)


def test_module_paths_resolve_after_install():
  tfe.install()
  from tensorflow_estimator.python.estimator.canned import parsing_utils  # pylint: disable=g-import-not-at-top
  from tensorflow_estimator.python.estimator.canned import rnn as real_rnn  # pylint: disable=g-import-not-at-top
  from tensorflow_estimator.python.estimator.head import sequential_head as seq  # pylint: disable=g-import-not-at-top
  assert real_rnn.RNNClassifier is rnn.RNNClassifier
  assert seq.SequentialHeadWrapper is sequential_head.SequentialHeadWrapper
  assert tf.estimator.experimental.RNNEstimator is rnn.RNNEstimator
  spec = parsing_utils.classifier_parse_example_spec(
      [tf.feature_column.numeric_column("x")], label_key="y")
  assert sorted(spec) == ["x", "y"]
