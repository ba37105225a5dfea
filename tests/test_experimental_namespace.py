"""tf.estimator.experimental and tf.compat.v1.estimator.experimental."""

import os
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat import v1 as tfe_v1
from estimator_compat.in_training.checkpoint_step_hook import StopAtCheckpointStepHook
from tests import models

# dir() of both namespaces in TF 2.15.1 + tensorflow-estimator 2.15.0.
TF215_V2 = {"InMemoryEvaluatorHook", "LinearSDCA", "RNNClassifier",
            "RNNEstimator", "build_raw_supervised_input_receiver_fn",
            "call_logit_fn", "make_early_stopping_hook",
            "make_stop_at_checkpoint_step_hook", "stop_if_higher_hook",
            "stop_if_lower_hook", "stop_if_no_decrease_hook",
            "stop_if_no_increase_hook"}
TF215_V1 = (TF215_V2 - {"RNNClassifier", "RNNEstimator"}) | {
    "KMeans", "dnn_logit_fn_builder", "linear_logit_fn_builder"}
CANNED = set()  # every TF 2.15 name is offered


@pytest.mark.parametrize("namespace,names", [
    (tfe.experimental, TF215_V2), (tfe_v1.experimental, TF215_V1)])
def test_every_tf215_name_is_offered_or_refused_clearly(namespace, names):
  assert set(dir(namespace)) == names - CANNED
  for name in names - CANNED:
    assert callable(getattr(namespace, name))
  for name in names & CANNED:
    with pytest.raises(AttributeError, match=f"'{name}'.*does not offer yet"):
      getattr(namespace, name)
  with pytest.raises(AttributeError, match="no attribute 'nothing'$"):
    namespace.nothing  # pylint: disable=pointless-statement


def test_v1_logit_fn_builders_are_the_canned_ones():
  from estimator_compat.canned import dnn, linear  # pylint: disable=g-import-not-at-top
  assert tfe_v1.experimental.dnn_logit_fn_builder is dnn.dnn_logit_fn_builder
  assert tfe_v1.experimental.linear_logit_fn_builder is (
      linear.linear_logit_fn_builder)
  assert not hasattr(tfe.experimental, "dnn_logit_fn_builder")


def test_rnn_estimators_are_only_in_the_v2_namespace():
  from estimator_compat.canned import rnn  # pylint: disable=g-import-not-at-top
  assert tfe.experimental.RNNClassifier is rnn.RNNClassifier
  assert tfe.experimental.RNNEstimator is rnn.RNNEstimator
  with pytest.raises(AttributeError, match="no attribute 'RNNClassifier'$"):
    tfe_v1.experimental.RNNClassifier  # pylint: disable=pointless-statement


def test_shared_names_are_the_same_objects():
  for name in set(dir(tfe.experimental)) - {"RNNClassifier", "RNNEstimator"}:
    assert getattr(tfe.experimental, name) is getattr(tfe_v1.experimental,
                                                      name)


def test_call_logit_fn_passes_what_it_declares():
  features = {"f1": tf.constant([[2., 3.]]), "f2": tf.constant([[4., 5.]])}

  def by_mode(features, mode):
    return features["f1"] if mode == tfe.ModeKeys.TRAIN else features["f2"]

  out = tfe.experimental.call_logit_fn(by_mode, features, tfe.ModeKeys.EVAL,
                                       "params", "config")
  np.testing.assert_allclose(out.numpy(), [[4., 5.]])
  heads = tfe.experimental.call_logit_fn(
      lambda features: {"a": features["f1"], "b": features["f2"]}, features,
      tfe.ModeKeys.TRAIN, None, None)
  assert sorted(heads) == ["a", "b"]
  for bad in (lambda features: [features["f1"]],
              lambda features: {"a": "not a tensor"}):
    with pytest.raises(ValueError, match="logit_fn should return a Tensor or "
                       "a dictionary mapping strings to Tensors"):
      tfe.experimental.call_logit_fn(bad, features, "m", None, None)


def test_stop_at_checkpoint_step_hook_by_task(tmp_path, monkeypatch):
  chief = models.estimator(tmp_path / "a")
  hook = tfe.experimental.make_stop_at_checkpoint_step_hook(chief, 7)
  assert isinstance(hook, tf.compat.v1.train.StopAtStepHook)
  monkeypatch.setenv("TF_CONFIG", (
      '{"cluster": {"chief": ["h:1"], "worker": ["h:2"]}, '
      '"task": {"type": "worker", "index": 0}}'))
  worker = models.estimator(tmp_path / "b")
  hook = tfe.experimental.make_stop_at_checkpoint_step_hook(worker, 7, 3)
  assert isinstance(hook, StopAtCheckpointStepHook)
  assert (hook.model_dir, hook.last_step) == (worker.model_dir, 7)


def _worker_run(model_dir, checkpoint_step):
  """One step of a worker at global step 9, the chief's save at `step`."""
  with tf.Graph().as_default():
    step = tf.compat.v1.train.create_global_step()
    if checkpoint_step is not None:
      with tf.compat.v1.Session() as session:
        session.run(step.assign(checkpoint_step))
        tf.compat.v1.train.Saver().save(
            session, os.path.join(model_dir, "model.ckpt"),
            global_step=checkpoint_step)
    assign = step.assign(9)
    no_op = tf.no_op()
    hook = StopAtCheckpointStepHook(model_dir, last_step=10)
    with tf.compat.v1.train.SingularMonitoredSession(hooks=[hook]) as session:
      session.raw_session().run(assign)
      with mock.patch("time.sleep") as sleep:
        session.run(no_op)
      return session.should_stop(), sleep.called


@pytest.mark.parametrize("saved,stops", [(None, False), (8, False),
                                         (10, True)])
def test_worker_stops_only_once_the_checkpoint_reached_the_step(
    tmp_path, saved, stops):
  should_stop, slept = _worker_run(str(tmp_path), saved)
  assert should_stop == stops
  assert slept == (not stops)


def test_raw_supervised_receiver_exports_train_and_eval(tmp_path, engine):
  del engine
  estimator = models.estimator(tmp_path / "model")
  estimator.train(models.input_fn(), steps=3)
  receiver_fn = tfe.experimental.build_raw_supervised_input_receiver_fn(
      {"x": tf.zeros([1, models.DIM])}, tf.zeros([1], tf.int64))
  path = estimator.experimental_export_all_saved_models(
      str(tmp_path / "export"),
      {tfe.ModeKeys.TRAIN: receiver_fn, tfe.ModeKeys.EVAL: receiver_fn})
  for tags in (["train"], ["eval"]):
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
      meta = tf.compat.v1.saved_model.load(session, tags, path)
      signature = meta.signature_def[tags[0]]
      assert sorted(signature.inputs) == ["label", "x"]
      assert "loss" in signature.outputs
