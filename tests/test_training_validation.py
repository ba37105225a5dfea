"""TrainSpec, EvalSpec and train_and_evaluate refuse bad arguments as the
Estimator did: same exception types, the Estimator's wording, then a fix.

The wording matters: legacy tests and programs match these messages.
"""

import json
import os

import pytest
import tensorflow as tf

import estimator_compat as tfe
from tests import models


def _input_fn():
  return {"x": tf.constant([[1.0]])}, tf.constant([[1]])


class _Exporter(tfe.Exporter):

  def __init__(self, name):
    self._name = name

  @property
  def name(self):
    return self._name

  def export(self, estimator, export_path, checkpoint_path, eval_result,
             is_the_final_export):
    del estimator, checkpoint_path, eval_result, is_the_final_export
    return export_path


class _NotAHook:
  pass


@pytest.mark.parametrize("make, error, message", [
    (lambda: tfe.TrainSpec(input_fn="invalid"), TypeError,
     "`input_fn` must be callable, given: 'invalid'. Fix: "),
    (lambda: tfe.TrainSpec(_input_fn, max_steps=0), ValueError,
     "Must specify max_steps > 0, given: 0. Fix: "),
    (lambda: tfe.TrainSpec(_input_fn, hooks=[_NotAHook()]), TypeError,
     "All hooks must be `SessionRunHook` instances, given: .*Fix: "),
    (lambda: tfe.TrainSpec(_input_fn, saving_listeners=[_NotAHook()]),
     TypeError, "All saving_listeners must be `CheckpointSaverListener` "
     "instances, given: .*Fix: "),
    (lambda: tfe.EvalSpec(input_fn=None), TypeError,
     "`input_fn` must be callable, given: None. Fix: "),
    (lambda: tfe.EvalSpec(_input_fn, steps=0), ValueError,
     "Must specify steps > 0, given: 0. Fix: "),
    (lambda: tfe.EvalSpec(_input_fn, name=123), TypeError,
     "`name` must be string, given: 123. Fix: "),
    (lambda: tfe.EvalSpec(_input_fn, hooks=[_NotAHook()]), TypeError,
     "All hooks must be `SessionRunHook` instances"),
    (lambda: tfe.EvalSpec(_input_fn, start_delay_secs=-1), ValueError,
     "Must specify start_delay_secs >= 0, given: -1. Fix: "),
    (lambda: tfe.EvalSpec(_input_fn, throttle_secs=-1), ValueError,
     "Must specify throttle_secs >= 0, given: -1. Fix: "),
])
def test_spec_arguments_are_refused_with_the_estimators_words(
    make, error, message):
  with pytest.raises(error, match=message):
    make()


@pytest.mark.parametrize("exporters, error, message", [
    ([_Exporter("a"), tfe.SessionRunHook()], TypeError,
     "`exporters` must be an Exporter, an iterable of Exporter, or `None`"),
    (tfe.SessionRunHook(), TypeError, "`exporters` must be an Exporter"),
    (_Exporter(123), ValueError,
     "An Exporter must have a string name. Given: <class 'int'>. Fix: "),
    ([_Exporter("a"), _Exporter("a")], ValueError,
     r"`exporters` must have unique names\..*\['a', 'a'\]\. Fix: "),
    ([_Exporter("a"), _Exporter(None)], ValueError,
     "An Exporter cannot have a name that is `None` or empty.*Fix: "),
    (_Exporter(""), ValueError,
     "An Exporter cannot have a name that is `None` or empty"),
])
def test_exporters_are_checked(exporters, error, message):
  with pytest.raises(error, match=message):
    tfe.EvalSpec(_input_fn, exporters=exporters)


def test_exporters_accepted_forms():
  one, two = _Exporter("a"), _Exporter("b")
  assert tfe.EvalSpec(_input_fn, exporters=one).exporters == (one,)
  assert tfe.EvalSpec(_input_fn, exporters=[one, two]).exporters == (one, two)
  assert tfe.EvalSpec(_input_fn, exporters=iter([one])).exporters == (one,)
  assert tfe.EvalSpec(_input_fn, exporters=[]).exporters == ()
  listener = tfe.CheckpointSaverListener()
  assert tfe.TrainSpec(
      _input_fn, saving_listeners=[listener]).saving_listeners == (listener,)


def test_train_and_evaluate_checks_eval_spec_then_estimator_then_train_spec(
    tmp_path):
  est = models.estimator(tmp_path)
  train_spec = tfe.TrainSpec(_input_fn, max_steps=1)
  eval_spec = tfe.EvalSpec(_input_fn)
  with pytest.raises(TypeError, match="`eval_spec` must have type "
                     "`tf.estimator.EvalSpec`.*Fix: "):
    tfe.train_and_evaluate(object(), train_spec, object())
  with pytest.raises(TypeError, match="`estimator` must have type "
                     "`tf.estimator.Estimator`.*Fix: "):
    tfe.train_and_evaluate(object(), object(), eval_spec)
  with pytest.raises(TypeError, match="`train_spec` must have type "
                     "`tf.estimator.TrainSpec`.*Fix: "):
    tfe.train_and_evaluate(est, object(), eval_spec)
  assert not os.listdir(tmp_path)


def test_second_evaluator_is_refused_before_anything_runs(tmp_path,
                                                          monkeypatch):
  monkeypatch.setenv("TF_CONFIG", json.dumps({
      "cluster": {"chief": ["host0:0"]},
      "task": {"type": "evaluator", "index": 1}}))
  est = models.estimator(tmp_path)
  with pytest.raises(ValueError, match="there can only be one `evaluator` "
                     "task .*with task id 0.*Given task id 1. Fix: "):
    tfe.train_and_evaluate(
        est, tfe.TrainSpec(_input_fn, max_steps=1),
        tfe.EvalSpec(_input_fn, start_delay_secs=3600))
  assert not os.listdir(tmp_path)
