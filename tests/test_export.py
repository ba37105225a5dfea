"""export_saved_model, receivers and exporters (both engines train)."""

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
  with pytest.raises(ValueError, match="best_eval_result and "
                     "current_eval_result"):
    tfe.BestExporter("best", lambda: None, compare_fn=lambda a, b: True)
