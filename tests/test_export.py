"""export_saved_model, receivers and exporters (both engines train)."""

import collections
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from tests import models

pytestmark = pytest.mark.usefixtures("engine")


@pytest.fixture(name="trained")
def _trained(tmp_path):
  est = models.estimator(tmp_path / "model")
  est.train(models.input_fn(), steps=5)
  return est


def _predict(est, rows):
  return list(est.predict(models.input_fn(num_epochs=1, rows=rows,
                                          labels=False)))


def test_raw_receiver_export_serves_what_predict_returns(trained, tmp_path):
  path = trained.export_saved_model(
      str(tmp_path / "export"),
      tfe.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 4])}))
  assert isinstance(path, bytes)
  assert os.path.basename(path).isdigit()
  assert sorted(os.listdir(path)) == [b"saved_model.pb", b"variables"]
  loaded = tf.saved_model.load(path.decode())
  assert list(loaded.signatures) == ["serving_default"]
  x, _ = models.data(7)
  served = loaded.signatures["serving_default"](x=tf.constant(x))
  expected = _predict(trained, 7)
  np.testing.assert_allclose(
      served["probabilities"].numpy(),
      np.stack([p["probabilities"] for p in expected]), rtol=1e-5)
  np.testing.assert_array_equal(served["class"].numpy(),
                                [p["class"] for p in expected])


def test_parsing_receiver_serves_tf_examples(trained, tmp_path):
  spec = {"x": tf.io.FixedLenFeature([models.DIM], tf.float32)}
  path = trained.export_saved_model(
      str(tmp_path / "export"),
      tfe.export.build_parsing_serving_input_receiver_fn(spec))
  x, _ = models.data(3)
  examples = [tf.train.Example(features=tf.train.Features(feature={
      "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))}))
              .SerializeToString() for row in x]
  signature = tf.saved_model.load(path.decode()).signatures[
      "serving_default"]
  served = signature(examples=tf.constant(examples))
  np.testing.assert_array_equal(served["class"].numpy(),
                                [p["class"] for p in _predict(trained, 3)])


def test_export_without_checkpoint_fails_clearly(tmp_path):
  est = models.estimator(tmp_path / "empty")
  with pytest.raises(ValueError, match="Couldn't find trained model.*Fix"):
    est.export_saved_model(str(tmp_path / "export"),
                           tfe.export.build_raw_serving_input_receiver_fn(
                               {"x": tf.zeros([1, 4])}))
  assert not os.path.exists(tmp_path / "export")


def test_receivers_validate_and_wrap():
  with tf.Graph().as_default():
    tensor = tf.compat.v1.placeholder(tf.float32, [None, 2])
    receiver = tfe.export.ServingInputReceiver(tensor, tensor)
    assert list(receiver.features) == ["feature"]
    assert list(receiver.receiver_tensors) == ["input"]
    single = tfe.export.TensorServingInputReceiver(tensor, {"x": tensor})
    assert single.features is tensor
    with pytest.raises(ValueError, match="must be a Tensor"):
      tfe.export.ServingInputReceiver({"a": "text"}, tensor)
    with pytest.raises(ValueError, match="single Tensor"):
      tfe.export.TensorServingInputReceiver({"a": tensor}, tensor)


def test_exporters_in_train_and_evaluate(tmp_path):
  receiver_fn = tfe.export.build_raw_serving_input_receiver_fn(
      {"x": tf.zeros([1, 4])})
  est = models.estimator(tmp_path, save_checkpoints_steps=3)
  exporters = [tfe.LatestExporter("latest", receiver_fn, exports_to_keep=2),
               tfe.FinalExporter("final", receiver_fn),
               tfe.BestExporter("best", receiver_fn)]
  _, results = tfe.train_and_evaluate(
      est, tfe.TrainSpec(models.input_fn(), max_steps=9),
      tfe.EvalSpec(models.input_fn(num_epochs=1), steps=None,
                   exporters=exporters, throttle_secs=0))
  export_dir = tmp_path / "export"
  latest = sorted(os.listdir(export_dir / "latest"))
  assert len(latest) == 2  # Evaluations at 3, 6, 9; keeps the newest two.
  assert len(os.listdir(export_dir / "final")) == 1
  assert 1 <= len(os.listdir(export_dir / "best")) <= 3
  assert results[0] is not None and results[1] is not None
  assert results[0].decode().endswith(latest[-1])


def test_best_exporter_needs_two_argument_compare_fn():
  # The Estimator's wording first, then the fix.
  with pytest.raises(ValueError, match="must include best_eval_result "
                     "argument. Fix: define it as compare_fn"):
    tfe.BestExporter("best", lambda: None, compare_fn=lambda a, b: True)
  with pytest.raises(ValueError, match="has following not expected args: "
                     r"\['extra'\]"):
    tfe.BestExporter(
        "best", lambda: None,
        compare_fn=lambda best_eval_result, current_eval_result, extra: True)
  with pytest.raises(ValueError, match="must be a positive number. Got 0"):
    tfe.BestExporter("best", lambda: None, exports_to_keep=0)


class _ExportRecorder:
  """Stands in for an Estimator: a model_dir and the exports asked of it."""

  def __init__(self, model_dir):
    self.model_dir = str(model_dir)
    self.exports = []

  def export_saved_model(self, export_dir_base, receiver_fn, **kwargs):
    del receiver_fn
    self.exports.append(kwargs["checkpoint_path"])
    return os.path.join(export_dir_base, str(len(self.exports)))


def _write_eval_summaries(directory, results):
  with tf.summary.create_file_writer(str(directory)).as_default():
    for step, loss in results:
      tf.summary.experimental.write_raw_pb(
          tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(
              tag="loss", simple_value=loss)]).SerializeToString(), step=step)


def test_best_exporter_always_exports_first_then_compares(tmp_path):
  # As the Estimator 2.15: the first export() of the exporter exports, even
  # when the eval summaries already in model_dir hold a better loss (a
  # restarted job) and even without an eval result; later ones compare with
  # the best so far.
  _write_eval_summaries(tmp_path / "eval", [(1, 0.1), (2, 0.2)])
  estimator = _ExportRecorder(tmp_path)
  exporter = tfe.BestExporter("best", lambda: None)
  export_dir = str(tmp_path / "export")
  assert exporter.export(estimator, export_dir, "ckpt-3", {"loss": 0.9},
                         False) is not None
  assert exporter.export(estimator, export_dir, "ckpt-4", {"loss": 0.95},
                         False) is None
  assert exporter.export(estimator, export_dir, "ckpt-5", {"loss": 0.5},
                         False) is not None
  assert estimator.exports == ["ckpt-3", "ckpt-5"]
  first = tfe.BestExporter("best", lambda: None)
  assert first.export(estimator, export_dir, None, None, False) is not None


def test_best_exporter_rereads_the_best_of_a_new_model_dir(tmp_path):
  # A new model_dir: the best so far is the best of its eval summaries.
  _write_eval_summaries(tmp_path / "b" / "eval", [(1, 0.3), (2, 0.2)])
  exporter = tfe.BestExporter("best", lambda: None)
  export_dir = str(tmp_path / "export")
  exporter.export(_ExportRecorder(tmp_path / "a"), export_dir, "a-1",
                  {"loss": 0.1}, False)
  other = _ExportRecorder(tmp_path / "b")
  assert exporter.export(other, export_dir, "b-3", {"loss": 0.25},
                         False) is None
  assert exporter.export(other, export_dir, "b-4", {"loss": 0.15},
                         False) is not None
  assert other.exports == ["b-4"]


def _signature_defs(path):
  from tensorflow.core.protobuf import saved_model_pb2  # pylint: disable=g-import-not-at-top
  proto = saved_model_pb2.SavedModel()
  name = os.path.join(path, b"saved_model.pb")
  with open(name, "rb") as f:
    proto.ParseFromString(f.read())
  return {tuple(m.meta_info_def.tags): m.signature_def
          for m in proto.meta_graphs}


def test_text_assets_extra_and_all_modes(trained, tmp_path):
  extra = tmp_path / "vocab.txt"
  extra.write_text("a\nb\n")

  def receiver_fn():  # An EVAL graph needs labels too.
    x = tf.compat.v1.placeholder(tf.float32, [None, models.DIM], name="x")
    labels = tf.compat.v1.placeholder(tf.int64, [None], name="labels")
    return collections.namedtuple(
        "SupervisedReceiver", ["features", "labels", "receiver_tensors"])(
            {"x": x}, labels, {"x": x, "labels": labels})

  path = trained.experimental_export_all_saved_models(
      str(tmp_path / "export"),
      {tfe.ModeKeys.PREDICT: tfe.export.build_raw_serving_input_receiver_fn(
          {"x": tf.zeros([1, 4])}),
       tfe.ModeKeys.EVAL: receiver_fn},
      assets_extra={"vocab/vocab.txt": str(extra)}, as_text=True)
  names = sorted(os.listdir(path))
  assert b"saved_model.pbtxt" in names and b"assets.extra" in names
  assert os.path.exists(os.path.join(path, b"assets.extra", b"vocab",
                                     b"vocab.txt"))
  predict_path = trained.export_saved_model(
      str(tmp_path / "export2"),
      tfe.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 4])}))
  signatures = _signature_defs(predict_path)
  assert list(signatures) == [("serve",)]
  assert signatures[("serve",)]["serving_default"].method_name == (
      "tensorflow/serving/predict")


def test_export_outputs_follow_the_serving_default_rules(tmp_path):
  def model_fn(features, labels, mode, params):
    spec = models.classifier_fn(features, labels, mode, params)
    if mode != tfe.ModeKeys.PREDICT:
      return spec
    outputs = {"scores": tfe.export.ClassificationOutput(
        scores=spec.predictions["probabilities"])}
    if params.get("two"):
      outputs["regress"] = tfe.export.RegressionOutput(
          value=tf.cast(spec.predictions["class"], tf.float32))
    return spec._replace(export_outputs=outputs)

  # Classify/regress signatures take serialized tf.Examples (TF Serving).
  receiver = tfe.export.build_parsing_serving_input_receiver_fn(
      {"x": tf.io.FixedLenFeature([models.DIM], tf.float32)})
  one = models.estimator(tmp_path / "one", model_fn=model_fn)
  one.train(models.input_fn(), steps=1)
  signatures = _signature_defs(one.export_saved_model(
      str(tmp_path / "e1"), receiver))[("serve",)]
  assert sorted(signatures) == ["scores", "serving_default"]
  assert signatures["serving_default"].method_name == (
      "tensorflow/serving/classify")
  two = models.estimator(tmp_path / "two", model_fn=model_fn,
                         params={"two": True})
  two.train(models.input_fn(), steps=1)
  with pytest.raises(ValueError, match="none of them are specified as the "
                     "default.*Fix: name one of them 'serving_default'"):
    two.export_saved_model(str(tmp_path / "e2"), receiver)
  assert os.listdir(tmp_path / "e2") == []  # The temp dir was removed.


@pytest.mark.parametrize("better,expected", [(True, 3), (False, 1)])
def test_best_exporter_uses_compare_fn(tmp_path, better, expected):
  seen = []

  def compare_fn(best_eval_result, current_eval_result):
    seen.append((int(best_eval_result["global_step"]),
                 int(current_eval_result["global_step"])))
    return better

  receiver_fn = tfe.export.build_raw_serving_input_receiver_fn(
      {"x": tf.zeros([1, 4])})
  est = models.estimator(tmp_path, save_checkpoints_steps=3)
  tfe.train_and_evaluate(
      est, tfe.TrainSpec(models.input_fn(), max_steps=9),
      tfe.EvalSpec(models.input_fn(num_epochs=1), steps=None,
                   throttle_secs=0,
                   exporters=tfe.BestExporter("best", receiver_fn,
                                              compare_fn=compare_fn,
                                              exports_to_keep=None)))
  # The first evaluation (step 3) exports without a comparison; later ones
  # are compared with the best so far.
  assert len(os.listdir(tmp_path / "export" / "best")) == expected
  assert [current for _, current in seen] == [6, 9]
  assert seen[0][0] == 3


def test_features_keyed_by_ints_reach_the_model_fn_in_export(tmp_path):
  # The Estimator accepted int feature keys (receiver tensors, the signature
  # inputs, stay strings); export passes the features dict as given.
  seen = []

  def model_fn(features, labels, mode, params):
    seen.append(sorted(features, key=str))
    return models.classifier_fn(features, labels, mode, params)

  est = models.estimator(tmp_path / "model", model_fn=model_fn)
  est.train(models.input_fn(), steps=1)

  def receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, models.DIM])
    return tfe.export.ServingInputReceiver({"x": x, 7: x * 2.0}, {"x": x})

  path = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
  assert seen[-1] == [7, "x"]
  signature = tf.saved_model.load(path.decode()).signatures["serving_default"]
  assert list(signature.structured_input_signature[1]) == ["x"]


def test_supervised_receivers_export_train_and_eval_graphs(trained, tmp_path):
  x, y = models.data(8)
  receiver_fn = tfe.experimental.build_raw_supervised_input_receiver_fn(
      {"x": tf.constant(x)}, tf.constant(y))
  path = trained.experimental_export_all_saved_models(
      str(tmp_path / "export"),
      {tfe.ModeKeys.TRAIN: receiver_fn, tfe.ModeKeys.EVAL: receiver_fn,
       tfe.ModeKeys.PREDICT: tfe.export.build_raw_serving_input_receiver_fn(
           {"x": tf.constant(x)})})
  signatures = _signature_defs(path)
  assert sorted(signatures) == [("eval",), ("serve",), ("train",)]
  assert sorted(signatures[("eval",)]["eval"].inputs) == ["label", "x"]
  assert sorted(signatures[("train",)]["train"].inputs) == ["label", "x"]
  # The EVAL graph computes the same loss as evaluate() on the same rows.
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    meta = tf.compat.v1.saved_model.load(session, ["eval"], path.decode())
    signature = meta.signature_def["eval"]
    loss = session.run(signature.outputs["loss"].name, {
        signature.inputs["x"].name: x, signature.inputs["label"].name: y})
  expected = trained.evaluate(
      tfe.inputs.numpy_input_fn({"x": x}, y, batch_size=8, shuffle=False,
                                num_epochs=1))["loss"]
  np.testing.assert_allclose(loss, expected, rtol=1e-5)


def test_a_stored_value_of_another_shape_is_exported_as_stored(tmp_path):
  # The Estimator's Saver restored it without a shape check: a serving input
  # narrower than the training one exports (checked on TF 2.15: the
  # SavedModel holds the trained [3, 1] value).
  def model_fn(features, labels, mode):
    del labels
    x = features["x"]
    w = tf.compat.v1.get_variable("w", [x.shape[-1], 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, predictions={"y": tf.matmul(x, w)},
                             loss=loss, train_op=train_op)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path / "model"))
  est.train(lambda: {"x": tf.ones([2, 3])}, steps=2)

  def receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 1])
    return tfe.export.ServingInputReceiver({"x": x}, {"x": x})

  path = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
  exported = tf.train.load_variable(
      os.path.join(path.decode(), "variables", "variables"), "w")
  np.testing.assert_array_equal(exported, est.get_variable_value("w"))
