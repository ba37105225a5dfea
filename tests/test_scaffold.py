"""EstimatorSpec(scaffold=...) on the default engine gives the Estimator's results.

Each expected value was recorded with the real Estimator (TF 2.15.1). The
function engine honours a default Scaffold and `summary_op`; any other field
makes the default engine run the call on the graph engine, and an explicit
engine='function' refuses it (docs/decisions.md, "Scaffold fields").
"""

import logging

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine
from tests import scaffold_models as sm


# No engine chosen: the default engine decides per call.
_default_engine = sm.default_engine


class _Net(tf.keras.Model):

  def __init__(self):
    super().__init__()
    self.l1 = tf.keras.layers.Dense(5)

  def call(self, x):
    return self.l1(x)


def _toy_dataset():
  inputs = tf.range(10.)[:, None]
  labels = inputs * 5. + tf.range(5.)[None, :]
  return tf.data.Dataset.from_tensor_slices(
      dict(x=inputs, y=labels)).repeat().batch(2)


def _guide_model_fn(features, labels, mode):
  del labels
  net = _Net()
  opt = tf.keras.optimizers.Adam(0.1)
  ckpt = tf.train.Checkpoint(step=tf.compat.v1.train.get_global_step(),
                             optimizer=opt, net=net)
  with tf.GradientTape() as tape:
    output = net(features["x"])
    loss = tf.reduce_mean(tf.abs(output - features["y"]))
  variables = net.trainable_variables
  gradients = tape.gradient(loss, variables)
  return tfe.EstimatorSpec(
      mode, loss=loss,
      train_op=tf.group(opt.apply_gradients(zip(gradients, variables)),
                        ckpt.step.assign_add(1)),
      scaffold=tf.compat.v1.train.Scaffold(saver=ckpt))


def test_checkpoint_saver_recipe_of_the_tf_guide_restores_step_10(tmp_path,
                                                                  caplog):
  est = tfe.Estimator(_guide_model_fn, str(tmp_path))
  with caplog.at_level(logging.INFO):
    est.train(_toy_dataset, steps=10)
  assert len(sm.routed_to_graph(caplog)) == 1
  ckpt = tf.train.Checkpoint(step=tf.Variable(1, dtype=tf.int64),
                             optimizer=tf.keras.optimizers.Adam(0.1),
                             net=_Net())
  ckpt.restore(tf.train.latest_checkpoint(str(tmp_path))).expect_partial()
  assert ckpt.step.numpy() == 10  # The Estimator: 10 (the bug: 1).
  assert sm.checkpoint_steps(tmp_path) == [0, 10]


def test_checkpoint_saver_model_resumes_predicts_and_exports(tmp_path):
  """The model's Checkpoint saver restores it (its names are object paths)."""
  est = tfe.Estimator(_guide_model_fn, str(tmp_path / "model"))
  est.train(_toy_dataset, steps=10)
  est.train(_toy_dataset, steps=5)  # Resumes: the Estimator reaches 15.
  reader = tf.train.load_checkpoint(est.latest_checkpoint())
  assert reader.get_tensor("step/.ATTRIBUTES/VARIABLE_VALUE") == 15
  x = np.array([[1.0], [2.0]], np.float32)
  expected = x @ reader.get_tensor(
      "net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE") + reader.get_tensor(
          "net/l1/bias/.ATTRIBUTES/VARIABLE_VALUE")

  def predict_model_fn(features, labels, mode):
    if mode != tfe.ModeKeys.PREDICT:
      return _guide_model_fn(features, labels, mode)
    net = _Net()
    ckpt = tf.train.Checkpoint(step=tf.compat.v1.train.get_global_step(),
                               optimizer=tf.keras.optimizers.Adam(0.1),
                               net=net)
    return tfe.EstimatorSpec(mode, predictions={"out": net(features["x"])},
                             scaffold=tf.compat.v1.train.Scaffold(saver=ckpt))

  est = tfe.Estimator(predict_model_fn, str(tmp_path / "model"))
  predictions = [p["out"] for p in est.predict(
      lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(2))]
  np.testing.assert_allclose(predictions, expected, rtol=1e-5)

  def serving_input_fn():
    inputs = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
    return tfe.export.ServingInputReceiver({"x": inputs}, {"x": inputs})

  path = est.export_saved_model(str(tmp_path / "export"), serving_input_fn)
  served = tf.saved_model.load(path).signatures["serving_default"](
      x=tf.constant(x))["out"]
  np.testing.assert_allclose(served.numpy(), expected, rtol=1e-5)


def test_custom_saver_keeps_its_max_to_keep(tmp_path):
  est = sm.estimator(tmp_path, "saver")
  est.train(sm.input_fn, steps=2)
  assert sm.checkpoint_steps(tmp_path) == [2]  # The Estimator's: max_to_keep=1.
  assert est.evaluate(sm.input_fn)["w"] == 1.0


def test_saver_from_the_savers_collection(tmp_path):
  sm.estimator(tmp_path, "saver_collection").train(sm.input_fn, steps=2)
  assert sm.checkpoint_steps(tmp_path) == [1, 2]  # max_to_keep=2.


def test_init_fn_runs_when_there_is_no_checkpoint(tmp_path, caplog):
  est = sm.estimator(tmp_path, "init_fn")
  with caplog.at_level(logging.INFO):
    est.train(sm.input_fn, steps=2)
  assert sm.routed_to_graph(caplog) == [
      "Scaffold.init_fn needs a TF1 Session (a function gets the Session "
      "after initialization) in train(): running this train() on the graph "
      "engine."]
  assert est.get_variable_value("w") == 3.0
  results = est.evaluate(sm.input_fn)
  assert (results["w"], results["loss"], results["global_step"]) == (3.0, 3.5,
                                                                     2)
  assert sm.predictions(est) == [0.0, 3.0, 6.0, 9.0]


def test_init_op(tmp_path):
  est = sm.estimator(tmp_path, "init_op")
  est.train(sm.input_fn, steps=2)
  assert est.get_variable_value("w") == 7.0
  assert est.evaluate(sm.input_fn)["loss"] == 87.5


def test_init_feed_dict(tmp_path):
  est = sm.estimator(tmp_path, "init_feed_dict")
  est.train(sm.input_fn, steps=2)
  assert est.get_variable_value("w") == 9.0
  assert sm.predictions(est) == [0.0, 9.0, 18.0, 27.0]


@pytest.mark.parametrize("field,message", [
    ("ready_op", "Init operations did not make model ready.  "),
    ("ready_for_local_init_op",
     "Init operations did not make model ready for local_init."),
])
def test_ready_ops_that_never_pass_fail_as_in_the_estimator(tmp_path, field,
                                                            message):
  est = sm.estimator(tmp_path, field)
  with pytest.raises(RuntimeError, match=message):
    est.train(sm.input_fn, steps=2)
  with pytest.raises(RuntimeError, match=message):
    est.evaluate(sm.input_fn)
  assert sm.checkpoint_steps(tmp_path) == []


def test_local_init_op(tmp_path):
  est = sm.estimator(tmp_path, "local_init_op")
  # The Estimator: replacing the default local_init_op leaves training's
  # model not ready; evaluate adds the metrics' initializer to it.
  with pytest.raises(RuntimeError, match="did not make model ready"):
    est.train(sm.input_fn, steps=2)
  results = est.evaluate(sm.input_fn)
  assert (results["w"], results["global_step"]) == (101.0, 0)
  np.testing.assert_allclose(results["loss"], 34303.5)


def test_summary_op_is_written_on_the_function_engine(tmp_path, caplog):
  est = sm.estimator(tmp_path, "summary_op")
  with caplog.at_level(logging.INFO):
    est.train(sm.input_fn, steps=2)
  assert not sm.routed_to_graph(caplog)
  # The Estimator writes the Scaffold's summary_op instead of all summaries.
  assert sm.summary_tags(tmp_path) == ["custom"]


def test_default_scaffold_stays_on_the_function_engine(tmp_path, caplog):
  est = sm.estimator(tmp_path)
  with caplog.at_level(logging.INFO):
    est.train(sm.input_fn, steps=2)
    assert est.evaluate(sm.input_fn)["w"] == 1.0
    assert sm.predictions(est) == [0.0, 1.0, 2.0, 3.0]
  assert not sm.routed_to_graph(caplog)
  assert sm.summary_tags(tmp_path) == ["loss"]


@pytest.mark.parametrize("field", [f for f in sm.FIELDS if f != "summary_op"])
def test_explicit_function_engine_refuses_session_fields(tmp_path, field):
  est = sm.estimator(tmp_path, field, engine="function")
  with pytest.raises(NeedsGraphEngine,
                     match="needs a TF1 Session.*" + GRAPH_ENGINE_FIX[:20]):
    est.train(sm.input_fn, steps=2)
  assert not list(tmp_path.iterdir())  # Nothing written.
