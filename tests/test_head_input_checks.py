"""The heads' checks of labels, logits, loss_fn and options (head/checks.py).

Every error below was compared with the real Estimator (TF 2.15,
tf.estimator.MultiClassHead(3) called eagerly): the same type and the same
words before our "Fix:" sentence. Where TF 2.15 failed with an
AttributeError (a loss_fn returning the wrong shape eagerly) we raise the
ValueError its graph mode gave.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as ec

_Z = tf.zeros([2, 3])
_LABELS = tf.constant([[1], [0]])


def _loss(head=None, labels=_LABELS, logits=_Z, **kwargs):
  return (head or ec.MultiClassHead(3)).loss(labels=labels, logits=logits,
                                             **kwargs)


@pytest.mark.parametrize("labels, logits, words", [
    (tf.constant(1), _Z,
     "labels must have rank at least 2.  Received rank 0, shape (). Fix:"),
    (tf.constant([[1], [0], [2]]), _Z,
     "labels shape must be [D0, D1, ... DN, 1]. Suggested Fix: check your "
     "n_classes argument to the head and/or the shape of your label., "
     "expected_labels_shape: (2, 1). labels_shape: (3, 1)."),
    (tf.constant([[1, 1], [0, 0]]), _Z,
     "Mismatched label shape. Expected labels dimension=1.  Received 2."),
    (_LABELS, tf.zeros([3]),
     "logits must have rank at least 2.  Received rank 1, shape (3,). Fix:"),
    (_LABELS, tf.zeros([2, 4]),
     "logits shape must be [D0, D1, ... DN, logits_dimension], got (2, 4)."),
    (tf.constant([[-1], [0]]), _Z, "Labels must be >= 0"),
    (tf.constant([[3], [0]]), _Z, "Labels must be <= 3 - 1"),
])
def test_eager_labels_and_logits_errors_are_the_estimators(labels, logits,
                                                           words):
  with pytest.raises(ValueError) as raised:
    _loss(labels=labels, logits=logits)
  assert str(raised.value).startswith(words), str(raised.value)


def test_an_unknown_prediction_key_lists_the_valid_ones():
  with pytest.raises(ValueError) as raised:
    ec.MultiClassHead(3).predictions(_Z, keys=["nope"])
  assert str(raised.value) == (
      "Prediction key must be in PredictionKeys, given: nope.Valid prediction "
      "keys include ['logits', 'probabilities', 'class_ids', 'classes', "
      "'all_class_ids', 'all_classes'].")


def test_a_loss_fn_taking_features_gets_them():
  def loss_fn(labels, logits, features):
    del logits
    return tf.cast(labels, tf.float32) * 0 + features["f"]

  head = ec.MultiClassHead(3, loss_fn=loss_fn)
  loss = _loss(head, features={"f": tf.constant([[2.0], [4.0]])})
  assert float(loss) == 3.0


def test_a_loss_fn_of_the_wrong_shape_is_a_value_error():
  head = ec.MultiClassHead(3, loss_fn=lambda labels, logits: tf.zeros([2]))
  with pytest.raises(ValueError) as raised:
    _loss(head)
  assert raised.value.args[0] == (
      "loss_fn must return Tensor of shape [D0, D1, ... DN, 1]. ")
  assert raised.value.args[2:] == ((2, 3), "loss_shape: ", (2,))


@pytest.mark.parametrize("kwargs, words", [
    ({"loss_fn": lambda labels, preds: labels},
     "loss_fn must contain argument: logits. Given arguments: "
     "('labels', 'preds')."),
    ({"loss_fn": lambda labels, logits, other: labels},
     "loss_fn has unexpected args: ['other']."),
    ({"loss_reduction": tf.keras.losses.Reduction.NONE},
     "Invalid loss_reduction: none. See `tf.losses.Reduction` for valid "
     "options."),
    ({"label_vocabulary": "abc"},
     "label_vocabulary should be a list or a tuple. Given type: "
     "<class 'str'>."),
])
def test_bad_head_options_are_refused_when_built(kwargs, words):
  with pytest.raises(ValueError) as raised:
    ec.MultiClassHead(3, **kwargs)
  assert str(raised.value).startswith(words) and "Fix:" in str(raised.value)


def test_two_classes_ask_for_the_binary_head():
  with pytest.raises(ValueError, match="n_classes must be > 2: 2. Fix: use "
                     "BinaryClassHead"):
    ec.MultiClassHead(2)


def _graph_loss(labels, logits, label_shape, logits_shape):
  with tf.Graph().as_default():
    label_in = tf.compat.v1.placeholder(tf.int64, label_shape)
    logits_in = tf.compat.v1.placeholder(tf.float32, logits_shape)
    loss = ec.MultiClassHead(3).loss(labels=label_in, logits=logits_in)
    with tf.compat.v1.Session() as session:
      return session.run(loss, {label_in: labels, logits_in: logits})


def test_in_a_graph_unknown_shapes_are_checked_when_the_step_runs():
  logits = np.zeros([2, 3], np.float32)
  labels = np.array([[1], [0]])
  loss = _graph_loss(labels, logits, None, [None, None])
  assert loss == pytest.approx(np.log(3.0), rel=1e-5)
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="logits shape must be"):
    _graph_loss(labels, np.zeros([2, 4], np.float32), None, [None, None])
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="labels shape must be"):
    _graph_loss(np.array([[1], [0], [2]]), logits, None, [None, None])
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="Labels must be >= 0"):
    _graph_loss(np.array([[-1], [0]]), logits, None, [None, None])


def test_in_a_graph_a_known_wrong_last_dimension_fails_at_once():
  with tf.Graph().as_default():
    with pytest.raises(ValueError, match="logits shape must be"):
      ec.MultiClassHead(3).loss(labels=tf.constant([[1]]),
                                logits=tf.zeros([1, 4]))
    with pytest.raises(ValueError, match="Mismatched label shape"):
      ec.MultiClassHead(3).loss(labels=tf.constant([[1, 1]]),
                                logits=tf.zeros([1, 3]))
