"""What evaluate() and predict() do as the Estimator did, on both engines.

Without a checkpoint they run the initializers (or the warm start);
non-scalar metrics reach the eval events file; the user's training hooks see
the step NanTensorHook stops on; predict() warns about an input that never
ends.
"""

import glob
import os
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe

pytestmark = pytest.mark.usefixtures("engine")


def _input_fn():
  return {"x": tf.constant([[1.0], [1.0]])}, tf.constant([[1.0], [1.0]])


def _dataset_input_fn():
  return tf.data.Dataset.from_tensors(({"x": [[1.0]]}, [[1.0]]))


def _variable_model_fn(initial):
  """A model whose metric and prediction are its variable `x` plus one."""

  def model_fn(features, labels, mode):
    del features, labels
    x = tf.compat.v1.get_variable("x", initializer=initial)
    return tfe.EstimatorSpec(
        mode, loss=tf.constant(1.0), predictions=tf.reshape(x + 1.0, [1]),
        eval_metric_ops={"plus_one": tf.compat.v1.metrics.mean(x + 1.0)},
        train_op=tf.compat.v1.assign_add(
            tf.compat.v1.train.get_global_step(), 1))

  return model_fn


def test_no_checkpoint_uses_initializers(tmp_path):
  est = tfe.Estimator(_variable_model_fn(3.0), model_dir=str(tmp_path))
  assert est.evaluate(_input_fn, steps=1)["plus_one"] == 4.0
  assert next(est.predict(_input_fn)) == 4.0
  assert est.latest_checkpoint() is None  # Nothing was trained or saved.


def test_no_checkpoint_uses_warm_start(tmp_path):
  first = tfe.Estimator(_variable_model_fn(3.0), model_dir=str(tmp_path / "a"))
  first.train(_input_fn, steps=2)
  est = tfe.Estimator(_variable_model_fn(30.0), model_dir=str(tmp_path / "b"),
                      warm_start_from=first.model_dir)
  assert est.evaluate(_input_fn, steps=1)["plus_one"] == 4.0
  assert next(est.predict(_input_fn)) == 4.0


def _events(folder):
  """{tag: Summary.Value} of the last value of each tag in folder's events."""
  out = {}
  for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        out[value.tag] = value
  return out


def test_non_scalar_metrics_reach_eval_events(tmp_path):
  def model_fn(features, labels, mode):
    del features, labels
    image = tf.zeros([5, 3, 3, 1])
    return tfe.EstimatorSpec(
        mode, loss=tf.constant(1.0),
        train_op=tf.compat.v1.assign_add(
            tf.compat.v1.train.get_global_step(), 1),
        eval_metric_ops={
            "image": (tf.compat.v1.summary.image("image", image,
                                                 max_outputs=3),
                      tf.no_op()),
            "vector": tf.compat.v1.metrics.mean_tensor(
                tf.constant([1.0, 0.5, 0.0])),
        })

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(_input_fn, steps=1)
  results = est.evaluate(_input_fn, steps=2)
  np.testing.assert_allclose(results["vector"], [1.0, 0.5, 0.0])
  tf.compat.v1.summary.FileWriterCache.clear()
  values = _events(est.eval_dir())
  assert {"image/0", "image/1", "image/2"} <= set(values)
  assert values["image/0"].HasField("image")
  assert values["vector"].HasField("tensor")
  np.testing.assert_allclose(tf.make_ndarray(values["vector"].tensor),
                             [1.0, 0.5, 0.0])
  assert values["loss"].simple_value == 1.0
  assert tf.make_ndarray(values["checkpoint_path"].tensor).item().decode() == (
      est.latest_checkpoint())


def test_user_hooks_run_before_nan_tensor_hook(tmp_path):
  def nan_model_fn(features, labels, mode):
    del features, labels
    step = tf.compat.v1.train.get_global_step()
    increment = tf.compat.v1.assign_add(step, 1)
    loss = tf.cond(increment > 1, lambda: tf.constant(np.nan),
                   lambda: tf.constant(1.0))
    return tfe.EstimatorSpec(mode, loss=loss, train_op=increment)

  class AfterRunCounter(tfe.SessionRunHook):

    def __init__(self):
      self.count = 0

    def after_run(self, run_context, run_values):
      del run_context, run_values
      self.count += 1

  counter = AfterRunCounter()
  est = tfe.Estimator(nan_model_fn, model_dir=str(tmp_path))
  with pytest.raises(tf.compat.v1.train.NanLossDuringTrainingError):
    est.train(_input_fn, steps=2, hooks=[counter])
  assert counter.count == 2


def _predict_model_fn(features, labels, mode):
  del labels
  return tfe.EstimatorSpec(
      mode, loss=tf.constant(0.0), predictions=features["x"] * 2.0,
      train_op=tf.compat.v1.assign_add(
          tf.compat.v1.train.get_global_step(), 1))


def _warnings_during_first_prediction(est, input_fn):
  with mock.patch.object(tf.compat.v1.logging, "warning") as warning:
    next(est.predict(input_fn))
  return " ".join(str(call) for call in warning.call_args_list)


def test_predict_warns_when_input_never_ends(tmp_path):
  est = tfe.Estimator(_predict_model_fn, model_dir=str(tmp_path))
  est.train(_input_fn, steps=1)
  assert "Input graph does not use tf.data.Dataset or contain a QueueRunner" \
      in _warnings_during_first_prediction(est, _input_fn)

  def iterator_input_fn():
    dataset = tf.data.Dataset.from_tensors({"x": [[1.0]]})
    return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()

  for input_fn in (_dataset_input_fn, iterator_input_fn):
    assert "QueueRunner" not in _warnings_during_first_prediction(
        est, input_fn)
