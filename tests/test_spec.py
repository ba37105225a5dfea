"""EstimatorSpec validation, as by the real EstimatorSpec (TF 2.15).

Exception types and the start of each message are the Estimator's (checked
against it case by case); ours adds a " Fix: ..." sentence.
"""

import pytest
import tensorflow as tf

import estimator_compat as tfe

_SERVING = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY


@pytest.fixture(name="graph")
def _graph():
  with tf.Graph().as_default() as graph:
    yield graph


def _other_graph_constant():
  with tf.Graph().as_default():
    return tf.constant(1.0, name="elsewhere")


def test_required_fields_by_mode(graph):
  del graph
  loss = tf.constant(1.0)
  with pytest.raises(ValueError, match="Missing train_op.*Fix"):
    tfe.EstimatorSpec(tfe.ModeKeys.TRAIN)  # train_op is checked first.
  with pytest.raises(ValueError, match="Missing loss.*Fix"):
    tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, train_op=tf.no_op())
  with pytest.raises(ValueError, match="Missing train_op.*global_step"):
    tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, loss=loss)
  with pytest.raises(ValueError, match="Missing loss.*EVAL mode"):
    tfe.EstimatorSpec(tfe.ModeKeys.EVAL)
  with pytest.raises(ValueError, match="Missing predictions.*Fix"):
    tfe.EstimatorSpec(tfe.ModeKeys.PREDICT)
  spec = tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, loss=loss, train_op=tf.no_op())
  assert spec.predictions == {}


def test_non_scalar_loss_names_shape_and_fix(graph):
  del graph
  with pytest.raises(ValueError, match=r"^Loss must be scalar, given: .*"
                     r"shape=\(2,\).*tf.reduce_mean"):
    tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))


def test_per_example_loss_becomes_scalar_checked_at_run_time(graph):
  # As the Estimator: a loss whose static shape may hold one value passes.
  per_example = tf.compat.v1.placeholder(tf.float32, [None])
  spec = tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, loss=per_example,
                           train_op=tf.no_op())
  assert spec.loss.shape.rank == 0
  with tf.compat.v1.Session(graph=graph) as session:
    assert session.run(spec.loss, {per_example: [2.5]}) == 2.5
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Loss must be scalar.*Fix: reduce it"):
      session.run(spec.loss, {per_example: [1.0, 2.0]})


def test_single_element_loss_becomes_scalar(graph):
  del graph
  spec = tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant([[2.0]]))
  assert spec.loss.shape.rank == 0


_EVAL, _TRAIN, _PREDICT = (tfe.ModeKeys.EVAL, tfe.ModeKeys.TRAIN,
                            tfe.ModeKeys.PREDICT)


# Each case: (fields built from a scalar tensor `t`, the Estimator's message).
@pytest.mark.parametrize("fields,message", [
    (lambda t: dict(mode=_EVAL, loss=1.0), "loss must be Tensor, given: 1.0"),
    (lambda t: dict(mode=_EVAL, loss=tf.sparse.from_dense([1.0])),
     "loss must be Tensor"),
    (lambda t: dict(mode=_TRAIN, loss=t, train_op="not an op"),
     "train_op must be Operation or Tensor"),
    (lambda t: dict(mode=_PREDICT, predictions=[t]),
     "predictions must be Tensor"),
    (lambda t: dict(mode=_PREDICT, predictions={"a": 1.0}),
     r"predictions\[a\] must be Tensor"),
    (lambda t: dict(mode=_EVAL, loss=t, evaluation_hooks=[object()]),
     "All hooks must be SessionRunHook instances"),
    (lambda t: dict(mode=_EVAL, loss=t, eval_metric_ops=["m"]),
     "eval_metric_ops must be a dict"),
    (lambda t: dict(mode=_EVAL, loss=t, eval_metric_ops={"m": t}),
     r"Values of eval_metric_ops must be \(metric_value, update_op\) tuples"),
    (lambda t: dict(mode=_EVAL, loss=t, eval_metric_ops={"m": [t, t]}),
     r"Values of eval_metric_ops must be \(metric_value, update_op\) tuples"),
    (lambda t: dict(mode=_EVAL, loss=t, scaffold=1),
     "scaffold must be tf.train.Scaffold"),
])
def test_wrong_types(graph, fields, message):
  del graph
  with pytest.raises(TypeError, match=message + ".*Fix"):
    tfe.EstimatorSpec(**fields(tf.constant(1.0)))


@pytest.mark.parametrize("field", ["loss", "train_op", "predictions",
                                   "prediction_dict", "eval_metric_ops"])
def test_tensors_from_another_graph_are_rejected(graph, field):
  del graph
  elsewhere = _other_graph_constant()
  here = tf.constant(1.0)
  fields = {"mode": tfe.ModeKeys.EVAL, "loss": here}
  if field == "loss":
    fields["loss"] = elsewhere
  elif field == "train_op":
    fields.update(mode=tfe.ModeKeys.TRAIN, train_op=elsewhere)
  elif field == "predictions":
    fields.update(mode=tfe.ModeKeys.PREDICT, predictions=elsewhere)
  elif field == "prediction_dict":
    fields.update(mode=tfe.ModeKeys.PREDICT, predictions={"p": elsewhere})
  else:
    fields["eval_metric_ops"] = {"m": (elsewhere, here)}
  with pytest.raises(ValueError,
                     match="(?s)must be from the default graph.*Fix"):
    tfe.EstimatorSpec(**fields)


def test_a_keras_metric_from_another_graph_is_rejected(graph):
  del graph
  with tf.Graph().as_default():
    elsewhere = tf.keras.metrics.Mean()
    elsewhere.update_state(tf.constant(1.0))
  with pytest.raises(ValueError,
                     match="(?s)must be from the default graph.*Fix"):
    tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant(1.0),
                      eval_metric_ops={"metric": elsewhere})


def test_a_keras_metric_without_updates_is_named_before_its_graph(graph):
  del graph
  with tf.Graph().as_default():
    never_updated = tf.keras.metrics.Mean()
  with pytest.raises(ValueError, match=r"Please call update_state\(...\)"):
    tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant(1.0),
                      eval_metric_ops={"mean": never_updated})


def test_predict_mode_gets_a_default_serving_output(graph):
  del graph
  predictions = {"p": tf.constant([1.0]), "q": tf.constant([2.0])}
  spec = tfe.EstimatorSpec(tfe.ModeKeys.PREDICT, predictions=predictions)
  assert list(spec.export_outputs) == [_SERVING]
  output = spec.export_outputs[_SERVING]
  assert isinstance(output, tfe.export.PredictOutput)
  assert sorted(output.outputs) == ["p", "q"]
  single = tfe.EstimatorSpec(tfe.ModeKeys.PREDICT,
                             predictions=tf.constant([1.0]))
  assert list(single.export_outputs[_SERVING].outputs) == ["output"]
  # Other modes keep what they were given.
  assert tfe.EstimatorSpec(tfe.ModeKeys.EVAL,
                           loss=tf.constant(1.0)).export_outputs is None


def test_export_outputs_are_validated(graph):
  del graph
  predictions = {"p": tf.constant([1.0])}
  head = tfe.export.PredictOutput(predictions)
  one = tfe.EstimatorSpec(tfe.ModeKeys.PREDICT, predictions=predictions,
                          export_outputs={"head": head})
  assert one.export_outputs == {"head": head, _SERVING: head}
  with pytest.raises(ValueError, match="none of them are specified as the "
                     "default.*Fix"):
    tfe.EstimatorSpec(tfe.ModeKeys.PREDICT, predictions=predictions,
                      export_outputs={"a": head, "b": head})
  with pytest.raises(TypeError, match="`export_outputs` must be dict.*Fix"):
    tfe.EstimatorSpec(tfe.ModeKeys.PREDICT, predictions=predictions,
                      export_outputs=[head])
  with pytest.raises(TypeError, match="Values in `export_outputs` must be "
                     "ExportOutput objects.*Fix"):
    tfe.EstimatorSpec(tfe.ModeKeys.PREDICT, predictions=predictions,
                      export_outputs={_SERVING: predictions["p"]})


def test_mode_cannot_change_on_replace(graph):
  # pylint: disable=protected-access
  del graph
  spec = tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant(1.0))
  with pytest.raises(ValueError, match="mode of EstimatorSpec cannot be "
                     "changed.*Fix"):
    spec._replace(mode=tfe.ModeKeys.TRAIN)
  assert spec._replace(mode=tfe.ModeKeys.EVAL).mode == tfe.ModeKeys.EVAL


def test_unknown_mode_is_rejected(graph):
  # Stricter than the Estimator, which accepted any string.
  del graph
  with pytest.raises(ValueError, match="mode must be one of"):
    tfe.EstimatorSpec("training", loss=tf.constant(1.0))


def test_variable_train_op_runs_its_op(graph):
  del graph
  step = tf.compat.v1.train.get_or_create_global_step()
  spec = tfe.EstimatorSpec(tfe.ModeKeys.TRAIN, loss=tf.constant(1.0),
                           train_op=tf.compat.v1.assign_add(step, 1))
  assert isinstance(spec.train_op, tf.Operation)


def test_defaults_filled(graph):
  del graph
  spec = tfe.EstimatorSpec(tfe.ModeKeys.EVAL, loss=tf.constant(1.0))
  assert spec.predictions == {}
  assert spec.eval_metric_ops == {}
  assert isinstance(spec.scaffold, tf.compat.v1.train.Scaffold)
  assert spec.training_hooks == ()


def test_assign_add_train_op_trains_on_both_engines(tmp_path, engine):
  del engine

  def model_fn(features, labels, mode):
    del labels
    step = tf.compat.v1.train.get_global_step()
    loss = tf.reduce_sum(features["x"]) * 0.0 + 1.0
    return tfe.EstimatorSpec(mode, loss=loss,
                             train_op=tf.compat.v1.assign_add(step, 1))

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(lambda: ({"x": [[1.0], [2.0]]}, None), steps=3)
  assert est.get_variable_value("global_step") == 3  # As the Estimator.
