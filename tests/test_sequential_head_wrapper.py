"""SequentialHeadWrapper: a static head over the unpadded steps.

The errors (before our "Fix:" sentence), the properties and the loss below
are what the real Estimator (TF 2.15, tensorflow_estimator's
SequentialHeadWrapper around BinaryClassHead(name="bin")) gave for the same
calls, eagerly.
"""

import pytest
import tensorflow as tf

import estimator_compat as ec
from estimator_compat.head.sequential_head import SequentialHeadWrapper

_LOGITS = tf.constant([[[1.0], [2.0], [0.0]], [[0.5], [0.0], [0.0]]])
_LABELS = tf.constant([[1, 0, 0], [1, 0, 0]])
_MASK = tf.constant([[1, 1, 0], [1, 0, 0]])
_W = tf.constant([[1.0, 2.0, 0.0], [3.0, 0.0, 0.0]])
_TF215_LOSS = 0.9714222550392151


def _head():
  return SequentialHeadWrapper(ec.BinaryClassHead(name="bin"), "m", "w")


@pytest.mark.parametrize("args, error, words", [
    ((3,), TypeError,
     "`sequence_mask` column must be a string. Given type: <class 'int'>."),
    (("m", 5), TypeError,
     "`feature_columns` must be either a string or an iterable of strings "
     "got <class 'int'> instead."),
    (("m", [5]), TypeError, "Column must a string. Given type: <class 'int'>."),
])
def test_bad_arguments_are_refused(args, error, words):
  with pytest.raises(error) as raised:
    SequentialHeadWrapper(ec.BinaryClassHead(), *args)
  assert str(raised.value).startswith(words) and "Fix:" in str(raised.value)


def test_a_multi_head_cannot_be_wrapped():
  multi = ec.MultiHead([ec.BinaryClassHead(name="a"),
                        ec.BinaryClassHead(name="b")])
  with pytest.raises(ValueError, match="`MultiHead` is not supported with "
                     "`SequentialHeadWrapper`."):
    SequentialHeadWrapper(multi, "m")


def test_properties_come_from_the_static_head():
  head = _head()
  assert (head.name, head.logits_dimension, head.loss_reduction,
          head.input_sequence_mask_key) == (
              "bin_sequential", 1, "sum_over_batch_size", "m")
  assert SequentialHeadWrapper(ec.BinaryClassHead(), "m").name is None
  assert isinstance(head.static_head, ec.BinaryClassHead)


def test_the_loss_covers_the_masked_steps_with_their_weights():
  loss = _head().loss(_LOGITS, _LABELS, features={"m": _MASK, "w": _W})
  assert float(loss) == pytest.approx(_TF215_LOSS, rel=1e-6)
  sparse_labels = tf.sparse.SparseTensor(
      indices=[[0, 0], [0, 1], [1, 0]], values=tf.constant([1, 0, 1]),
      dense_shape=[2, 3])
  loss = _head().loss(_LOGITS, sparse_labels, features={"m": _MASK, "w": _W})
  assert float(loss) == pytest.approx(_TF215_LOSS, rel=1e-6)


@pytest.mark.parametrize("features, labels, words", [
    ({"w": _W}, _LABELS,
     "The provided sequence_length_mask key `m` should be included in the "
     "features dictionary, but was not found. Found keys: ['w']."),
    ({"m": tf.constant([1, 1]), "w": _W}, _LABELS,
     "Mask is expected to have two dimensions, got 1 instead."),
    ({"m": _MASK}, _LABELS, "`w` column expected in features dictionary."),
    ({"m": _MASK, "w": _W}, tf.constant([1, 0]),
     "Input tensor expected to have at least 2 dimensions, got 1 instead."),
])
def test_missing_or_misshapen_inputs_are_refused(features, labels, words):
  with pytest.raises(ValueError) as raised:
    _head().loss(_LOGITS, labels, features=features)
  assert str(raised.value).startswith(words), str(raised.value)


def test_sparse_values_that_do_not_fill_the_mask_are_refused():
  two_values = tf.sparse.SparseTensor(
      indices=[[0, 0], [1, 0]], values=tf.constant([1, 1]),
      dense_shape=[2, 3])
  with pytest.raises(ValueError,
                     match="Tensor shape is incompatible with provided mask"):
    _head().loss(_LOGITS, two_values, features={"m": _MASK, "w": _W})


def test_a_variable_is_neither_a_tensor_nor_a_sparse_tensor():
  with pytest.raises(ValueError, match="expected to be a `Tensor` or"):
    _head().loss(_LOGITS, _LABELS,
                 features={"m": _MASK, "w": tf.Variable(_W)})


def test_predict_keeps_every_step_and_adds_the_mask():
  spec = _head().create_estimator_spec(
      features={"m": _MASK, "w": _W}, mode=ec.ModeKeys.PREDICT,
      logits=_LOGITS)
  assert spec.predictions["m"] is _MASK
  assert spec.predictions["logits"].shape == (2, 3, 1)
  assert sorted(_head().predictions(_LOGITS, keys=["logits"])) == ["logits"]


def test_eval_metrics_see_only_the_masked_steps():
  head = _head()
  metrics = head.update_metrics(head.metrics(), {"m": _MASK, "w": _W},
                                _LOGITS, _LABELS)
  # Three steps: logits 1, 2 (label 1, 0) and 0.5 (label 1), weights 1, 2, 3.
  assert float(metrics["label/mean/bin"].result()) == pytest.approx(4. / 6.)


def test_in_a_graph_the_step_count_is_checked_when_run():
  with tf.Graph().as_default():
    mask = tf.compat.v1.placeholder(tf.int32, [None, None])
    weights = tf.compat.v1.placeholder(tf.float32, [None, None])
    labels = tf.compat.v1.sparse_placeholder(tf.int64, shape=[2, 3])
    logits = tf.constant(_LOGITS.numpy())
    loss = _head().loss(logits, labels, features={"m": mask, "w": weights})
    feed = {mask: _MASK.numpy(), weights: _W.numpy()}
    with tf.compat.v1.Session() as session:
      feed[labels] = tf.compat.v1.SparseTensorValue(
          [[0, 0], [0, 1], [1, 0]], [1, 0, 1], [2, 3])
      assert session.run(loss, feed) == pytest.approx(_TF215_LOSS, rel=1e-6)
      feed[labels] = tf.compat.v1.SparseTensorValue(
          [[0, 0], [1, 0]], [1, 1], [2, 3])
      with pytest.raises(tf.errors.InvalidArgumentError,
                         match="Tensor shape is incompatible"):
        session.run(loss, feed)
