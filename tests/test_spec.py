"""EstimatorSpec validation."""

import pytest
import tensorflow as tf

import estimator_compat as tfe


@pytest.fixture(name="graph")
def _graph():
  with tf.Graph().as_default() as graph:
    yield graph


def test_train_needs_loss_and_train_op(graph):
  del graph
  loss = tf.constant(1.0)
  with pytest.raises(ValueError, match="missing `loss`"):
    tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, train_op=tf.no_op())
  with pytest.raises(ValueError, match="missing `train_op`.*global_step"):
    tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, loss=loss)


def test_eval_needs_loss_and_predict_needs_predictions(graph):
  del graph
  with pytest.raises(ValueError, match=r"mode='eval'\) is missing `loss`"):
    tfe.EstimatorSpec(tfe.ModeKeys.EVAL)
  with pytest.raises(ValueError, match="missing `predictions`"):
    tfe.EstimatorSpec(tfe.ModeKeys.PREDICT)


def test_non_scalar_loss_names_shape_and_fix(graph):
  del graph
  per_example = tf.compat.v1.placeholder(tf.float32, [None])
  with pytest.raises(ValueError, match=r"shape \(None,\).*tf.reduce_mean"):
    tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, loss=per_example,
                      train_op=tf.no_op())


def test_single_element_loss_becomes_scalar(graph):
  del graph
  spec = tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant([[2.0]]))
  assert spec.loss.shape.rank == 0


def test_bad_mode_hooks_and_metrics(graph):
  del graph
  loss = tf.constant(1.0)
  with pytest.raises(ValueError, match="mode must be one of"):
    tfe.EstimatorSpec("training", loss=loss)
  with pytest.raises(TypeError, match="SessionRunHook"):
    tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=loss, evaluation_hooks=[object()])
  with pytest.raises(TypeError, match=r"\(value_op, update_op\)"):
    tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=loss,
                      eval_metric_ops={"m": loss})


def test_defaults_filled(graph):
  del graph
  spec = tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant(1.0))
  assert spec.predictions == {}
  assert spec.eval_metric_ops == {}
  assert isinstance(spec.scaffold, tf.compat.v1.train.Scaffold)
  assert spec.training_hooks == ()
