"""Features and labels of any structure reach model_fn as the Estimator gave them.

Tuple or list labels (multi-output models), nested tuples and lists of
differently shaped tensors as features: the Estimator handed model_fn the
input_fn's structure unchanged (checked on TF 2.15), numpy arrays as numpy
arrays. The function engine's Dataset carries the tensors; the lists and
numpy values are put back around them when model_fn is traced.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe


_A = np.full((4, 2), 2.0, np.float32)
_B = np.full((4, 3), 3.0, np.float32)

_CASES = {
    "tuple_labels": lambda: ({"x": tf.constant(_A)},
                             (tf.constant(_A), tf.constant(_B))),
    "list_labels": lambda: ({"x": tf.constant(_A)},
                            [tf.constant(_A), tf.constant(_B)]),
    "nested_tuple_features": lambda: ((tf.constant(_A), (tf.constant(_B),)),
                                      tf.constant(_A)),
    "list_features": lambda: ([tf.constant(_A), tf.constant(_B)],
                              tf.constant(_B)),
    "tuple_numpy_labels": lambda: ({"x": _A}, (_A, _B)),
    "list_numpy_features": lambda: ([_A, _B], _B),
    "list_mixed_features": lambda: ([tf.constant(_A), _B], [_A]),
}


def _structure(value):
  """Types and shapes of a nest, with its tuples and lists told apart."""
  if isinstance(value, dict):
    return {k: _structure(v) for k, v in value.items()}
  if isinstance(value, (tuple, list)):
    return type(value)(_structure(v) for v in value)
  kind = "tensor" if tf.is_tensor(value) else type(value).__name__
  return kind, tuple(value.shape)


@pytest.mark.parametrize("case", sorted(_CASES))
def test_structures_reach_model_fn_unchanged(engine_name, case, tmp_path):
  del engine_name
  seen = []

  def model_fn(features, labels, mode):
    seen.append((_structure(features), _structure(labels)))
    w = tf.compat.v1.get_variable("w", [], initializer=tf.ones_initializer())
    loss = w * tf.add_n([tf.reduce_sum(t) for t in tf.nest.flatten(
        (features, labels))])
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.0).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  input_fn = _CASES[case]
  est.train(input_fn, steps=1)
  loss = est.evaluate(input_fn, steps=1)["loss"]
  features, labels = input_fn()
  assert seen[-1] == (_structure(features), _structure(labels))
  expected = sum(float(np.sum(t)) for t in tf.nest.flatten((features,
                                                            labels)))
  assert loss == pytest.approx(expected)
