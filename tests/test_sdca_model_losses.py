"""SDCAModel's predictions and losses for each loss type, and its argument
checks. The numbers are what TF 2.15's `sdca_ops._SDCAModel` gave for the
same examples and weights (reference virtualenv, 2026-12-02)."""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.canned.sdca import sdca_model

# loss type: (predictions, unregularized loss, regularized loss)
EXPECTED = {
    "logistic_loss": ([0.916827, 0.586618, 0.616567], 0.598684, 1.332256),
    "squared_loss": ([2.4, 0.35, 0.475], 0.334688, 1.068259),
    "hinge_loss": ([2.4, 0.35, 0.475], 0.846429, 1.58),
    "smooth_hinge_loss": ([2.4, 0.35, 0.475], 0.846429, 1.58),
    "poisson_loss": ([11.023177, 1.419068, 1.608014], 3.43652, 4.170091),
}


def _examples():
  return {
      "sparse_features": [sdca_model.SparseFeatureColumn(
          [0, 0, 2], [0, 2, 1], [1.0, 2.0, 0.5])],
      "dense_features": [tf.constant([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])],
      "example_labels": tf.constant([1.0, 0.0, 1.0]),
      "example_weights": tf.constant([1.0, 2.0, 0.5]),
      "example_ids": tf.constant(["a", "b", "c"])}


def _options(loss_type, l1=0.5, l2=2.0):
  return {"loss_type": loss_type, "symmetric_l1_regularization": l1,
          "symmetric_l2_regularization": l2}


@pytest.mark.parametrize("loss_type", sorted(EXPECTED))
def test_predictions_and_losses(loss_type):
  with tf.Graph().as_default():
    variables = {
        "sparse_features_weights": [
            tf.compat.v1.Variable([0.5, -0.25, 1.0], name="sw")],
        "dense_features_weights": [
            tf.compat.v1.Variable([0.3, -0.2], name="dw")]}
    examples = _examples()
    model = sdca_model.SDCAModel(examples, variables, _options(loss_type))
    fetches = (model.predictions(examples),
               model.unregularized_loss(examples),
               model.regularized_loss(examples))
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      predictions, unregularized, regularized = session.run(fetches)
  expected = EXPECTED[loss_type]
  np.testing.assert_allclose(predictions, expected[0], rtol=1e-5)
  assert unregularized == pytest.approx(expected[1], abs=1e-5)
  assert regularized == pytest.approx(expected[2], abs=1e-5)


@pytest.mark.parametrize("options, message", [
    (_options("absolute_loss"), "Unsupported loss_type"),
    (_options("squared_loss", l2=0.0),
     "symmetric_l2_regularization should be positive."),
    (_options("squared_loss", l1=-1.0),
     "symmetric_l1_regularization should be non-negative."),
    ({}, "examples, variables and options must all be specified."),
])
def test_bad_options(options, message):
  with tf.Graph().as_default():
    variables = {"sparse_features_weights": [],
                 "dense_features_weights": [tf.compat.v1.Variable([0.0, 0.0])]}
    with pytest.raises(ValueError, match=message):
      sdca_model.SDCAModel(_examples(), variables, options)
