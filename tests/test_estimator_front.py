"""The Estimator's own argument checks: its exception types and words first.

Each error starts as the Estimator's did (programs and the Estimator's tests
match it), then says how to fix the problem.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat.front.fn_args import fn_args
from tests import models


def _features_only_input_fn():
  return {"x": tf.constant([[1.0], [2.0]])}


def _counting_model_fn(features, labels, mode):
  del features, labels
  return tfe.EstimatorSpec(
      mode, loss=tf.constant(1.0), predictions=tf.constant([[1.0], [2.0]]),
      train_op=tf.compat.v1.assign_add(
          tf.compat.v1.train.get_global_step(), 1))


class _NotAListener:
  pass


# --- construction (no engine involved) ---------------------------------------


def test_config_must_be_a_run_config():
  with pytest.raises(ValueError, match="^config must be an instance of "
                     "`RunConfig`, but provided NotARunConfig.*Fix"):
    tfe.Estimator(model_fn=None, config="NotARunConfig")


def test_model_fn_must_be_provided():
  with pytest.raises(ValueError, match="^model_fn must be provided to "
                     "Estimator.*Fix"):
    tfe.Estimator(model_fn=None)


def test_model_dir_conflict(tmp_path):
  config = tfe.RunConfig(model_dir=str(tmp_path / "a"))
  with pytest.raises(ValueError, match="^`model_dir` are set both in "
                     "constructor and `RunConfig`, but with different values."
                     ".*In constructor: '.*b', in `RunConfig`: '.*a'.*Fix"):
    tfe.Estimator(_counting_model_fn, model_dir=str(tmp_path / "b"),
                  config=config)


def test_model_fn_argument_checks(tmp_path):
  def no_features(x, labels):
    del x, labels

  def unknown(features, something):
    del features, something

  with pytest.raises(ValueError, match=r"^model_fn \(.*\) must include "
                     "features argument.*Fix"):
    tfe.Estimator(no_features, model_dir=str(tmp_path))
  with pytest.raises(ValueError, match=r"^model_fn \(.*\) has following not "
                     r"expected args: \['something'\].*Fix"):
    tfe.Estimator(unknown, model_dir=str(tmp_path))


def test_model_fn_property_has_fixed_signature_and_binds_params(tmp_path):
  seen = []

  def model_fn(features, labels, mode, config, params):
    seen.append((mode, params, config.tf_random_seed))
    return _counting_model_fn(features, labels, mode)

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path), params={"a": 1})
  bound = est.model_fn
  assert set(fn_args(bound)) == {"features", "labels", "mode", "config"}
  with tf.Graph().as_default():
    tf.compat.v1.train.get_or_create_global_step()
    spec = bound({"x": tf.constant([[1.0]])}, None, tfe.ModeKeys.TRAIN,
                 tfe.RunConfig(tf_random_seed=7))
  assert isinstance(spec, tfe.EstimatorSpec)
  assert seen == [(tfe.ModeKeys.TRAIN, {"a": 1}, 7)]

  def short_model_fn(features, labels):
    del features, labels

  short = tfe.Estimator(short_model_fn, model_dir=str(tmp_path / "short"))
  assert set(fn_args(short.model_fn)) == {"features", "labels", "mode",
                                          "config"}


def test_subclass_may_not_override_methods(tmp_path):
  class Overriding(tfe.Estimator):

    def __init__(self):
      super().__init__(_counting_model_fn, model_dir=str(tmp_path))

    def predict(self, input_fn, predict_keys=None, hooks=None):
      del input_fn, predict_keys, hooks

  class Extending(tfe.Estimator):

    def __init__(self):
      super().__init__(_counting_model_fn, model_dir=str(tmp_path))

    def predict_proba(self, input_fn):
      del input_fn

    def latest_checkpoint(self):  # Allowed, as by the Estimator.
      return None

  with pytest.raises(ValueError, match=r"^Subclasses of Estimator cannot "
                     r"override members of Estimator\..*does override "
                     r"\['predict'\].*Fix"):
    Overriding()
  Extending()


def test_variables_need_a_trained_model(tmp_path):
  est = tfe.Estimator(_counting_model_fn, model_dir=str(tmp_path))
  with pytest.raises(ValueError, match="^Could not find trained model in "
                     "model_dir: .*Fix"):
    est.get_variable_names()
  with pytest.raises(ValueError, match="^Could not find trained model"):
    est.get_variable_value("global_step")


# --- calls (both engines) ----------------------------------------------------


@pytest.mark.usefixtures("engine")
def test_hooks_and_listeners_types(tmp_path):
  est = tfe.Estimator(_counting_model_fn, model_dir=str(tmp_path))
  hook_error = "^Hooks must be a SessionRunHook, given: NotAHook.*Fix"
  with pytest.raises(TypeError, match=hook_error):
    est.train(_features_only_input_fn, steps=1, hooks=["NotAHook"])
  with pytest.raises(TypeError, match="^saving_listeners must be a list of "
                     "CheckpointSaverListener, given: .*Fix"):
    est.train(_features_only_input_fn, steps=1,
              saving_listeners=[_NotAListener()])
  assert models.checkpoint_files(str(tmp_path)) == []
  with pytest.raises(TypeError, match=hook_error):
    est.evaluate(_features_only_input_fn, steps=1, hooks=["NotAHook"])
  with pytest.raises(TypeError, match=hook_error):
    next(est.predict(_features_only_input_fn, hooks=["NotAHook"]))


@pytest.mark.usefixtures("engine")
def test_model_fn_must_return_estimator_spec(tmp_path):
  def model_fn(features, labels, mode):
    del features, labels, mode
    return "NotGoodNotGood"

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  with pytest.raises(ValueError, match="^model_fn should return an "
                     "EstimatorSpec.*str.*Fix"):
    est.train(_features_only_input_fn, steps=1)


@pytest.mark.usefixtures("engine")
def test_spec_without_mode_from_model_fn_without_mode(tmp_path):
  calls = []

  def model_fn(features):
    calls.append(1)
    return tfe.EstimatorSpec(
        mode=None, predictions=features["x"] * 2.0, loss=tf.constant(0.0),
        train_op=tf.compat.v1.assign_add(
            tf.compat.v1.train.get_global_step(), 1))

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est.train(_features_only_input_fn, steps=2)
  assert est.get_variable_value("global_step") == 2
  assert est.evaluate(_features_only_input_fn, steps=1)["loss"] == 0.0
  assert list(next(est.predict(_features_only_input_fn))) == [2.0]

  def no_train_op(features):
    return tfe.EstimatorSpec(mode=None, loss=tf.reduce_sum(features["x"]))

  broken = tfe.Estimator(no_train_op, model_dir=str(tmp_path / "broken"))
  with pytest.raises(ValueError, match="^Missing train_op.*Fix"):
    broken.train(_features_only_input_fn, steps=1)


@pytest.mark.usefixtures("engine")
def test_saving_listeners_need_a_saver(tmp_path):
  est = tfe.Estimator(
      _counting_model_fn, model_dir=str(tmp_path),
      config=tfe.RunConfig(save_checkpoints_steps=None,
                           save_checkpoints_secs=None))
  with pytest.raises(ValueError, match="^There should be a "
                     "CheckpointSaverHook to use saving_listeners.*Fix"):
    est.train(_features_only_input_fn, steps=1,
              saving_listeners=[tfe.CheckpointSaverListener()])
  assert models.checkpoint_files(str(tmp_path)) == []


def _two_predictions_fn(y2_rows):
  def model_fn(features, labels, mode):
    del labels
    return tfe.EstimatorSpec(
        mode, loss=tf.reduce_sum(features["x"]),
        train_op=tf.compat.v1.assign_add(
            tf.compat.v1.train.get_global_step(), 1),
        predictions={"y1": tf.constant([[10.0]]),
                     "y2": tf.zeros([y2_rows, 1])})
  return model_fn


@pytest.mark.usefixtures("engine")
def test_predict_keys(tmp_path):
  est = tfe.Estimator(_two_predictions_fn(1), model_dir=str(tmp_path))
  est.train(_features_only_input_fn, steps=1)
  with pytest.raises(ValueError, match=r"^Expected to run at least one output "
                     r"from dict_keys\(\['y1', 'y2'\]\), provided "
                     r"\['y3'\]\. Fix"):
    next(est.predict(_features_only_input_fn, predict_keys=["y3"]))
  # A string is named as given, and (`in`) matches the keys it contains.
  with pytest.raises(ValueError, match=r"from dict_keys\(\['y1', 'y2'\]\), "
                     r"provided y3\. Fix"):
    next(est.predict(_features_only_input_fn, predict_keys="y3"))
  assert set(next(est.predict(_features_only_input_fn,
                              predict_keys="y12"))) == {"y1"}
  # As the Estimator: keys it does not predict are left out.
  assert set(next(est.predict(_features_only_input_fn,
                              predict_keys=["y1", "y3"]))) == {"y1"}
  tensor_est = tfe.Estimator(_counting_model_fn, model_dir=str(tmp_path / "t"))
  tensor_est.train(_features_only_input_fn, steps=1)
  with pytest.raises(ValueError, match="^predict_keys argument is not valid "
                     "in case of non-dict predictions.*Fix"):
    next(tensor_est.predict(_features_only_input_fn, predict_keys=["y"]))


@pytest.mark.usefixtures("engine")
def test_prediction_batch_lengths_must_match(tmp_path):
  est = tfe.Estimator(_two_predictions_fn(2), model_dir=str(tmp_path))
  est.train(_features_only_input_fn, steps=1)
  with pytest.raises(ValueError, match="^Batch length of predictions should "
                     "be same. y2 has different batch length than others.*Fix"):
    next(est.predict(_features_only_input_fn))
  batch = next(est.predict(_features_only_input_fn,
                           yield_single_examples=False))
  assert batch["y2"].shape == (2, 1)


@pytest.mark.usefixtures("engine")
def test_a_scalar_prediction_cannot_be_split_into_examples(tmp_path):
  def model_fn(features, mode):
    total = tf.reduce_sum(features["x"])
    return tfe.EstimatorSpec(mode, predictions={"x": features["x"],
                                                "total": total})

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  # TF 2.15's error (it read the scalar's shape[0]), then the fix.
  with pytest.raises(IndexError, match="^tuple index out of range: "
                     "prediction 'total' is a scalar.*Fix"):
    next(est.predict(_features_only_input_fn))
  batch = next(est.predict(_features_only_input_fn,
                           yield_single_examples=False))
  assert batch["total"].shape == ()


def test_input_without_tensors_trains_on_each_engine(tmp_path, monkeypatch):
  """`({}, None)` trains; model_fn gets `{}` and None, as from TF 2.15."""
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)
  seen = []

  def model_fn(mode, features, labels):
    seen.append((features, labels))
    return tfe.EstimatorSpec(
        mode=mode, loss=tf.constant(1.0),
        train_op=tf.compat.v1.assign_add(
            tf.compat.v1.train.get_global_step(), 1))

  def empty_input_fn():
    return {}, None

  for engine in (None, "graph", "function"):
    est = tfe.Estimator(model_fn, model_dir=str(tmp_path / str(engine)),
                        config=tfe.RunConfig(engine=engine))
    est.train(empty_input_fn, steps=2)
    assert est.get_variable_value("global_step") == 2
  assert seen == [({}, None)] * 3


@pytest.mark.usefixtures("engine")
def test_each_call_gets_its_own_params_and_config(tmp_path):
  """A model_fn or input_fn that changes params does so in its own copy.

  The Estimator passed deep copies (its `params` and `config` properties)
  to every call: under TF 2.15 this program evaluates and predicts 3.0
  (n = 1, lst = [1, 1]); with one shared dict it read 6.0, then 10.0.
  """
  configs = []

  def model_fn(features, labels, mode, params, config):
    del labels
    params["n"] += 1
    params["lst"].append(len(params["lst"]))
    configs.append(config)
    value = tf.compat.v1.get_variable(
        "v", [], initializer=tf.compat.v1.zeros_initializer())
    out = value + float(params["n"]) + float(sum(params["lst"]))
    return tfe.EstimatorSpec(
        mode, loss=out, predictions={"o": out + 0 * features["x"]},
        eval_metric_ops={"o": tf.compat.v1.metrics.mean(out)},
        train_op=tf.compat.v1.assign_add(
            tf.compat.v1.train.get_global_step(), 1))

  def input_fn(params):
    params["n"] = 100  # Seen by no model_fn call.
    return tf.data.Dataset.from_tensor_slices(
        ({"x": [1.0]}, [0])).repeat().batch(1)

  params = {"n": 0, "lst": [1]}
  est = tfe.Estimator(model_fn, model_dir=str(tmp_path), params=params)
  est.train(input_fn, steps=1)
  assert est.evaluate(input_fn, steps=1)["o"] == pytest.approx(3.0)
  assert next(est.predict(lambda: input_fn({}).take(1)))["o"] == (
      pytest.approx(3.0))
  assert params == {"n": 0, "lst": [1]}
  assert est.params == {"n": 0, "lst": [1]}
  assert len(configs) == 3 and len({id(c) for c in configs}) == 3
  assert all(c.model_dir == str(tmp_path) for c in configs)


def test_assigning_model_fn_replaces_it_for_later_calls(tmp_path):
  # neural-structured-learning's add_adversarial_regularization assigns
  # `estimator._model_fn` (finding G41); it was ignored here, silently.
  def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable(
        "w", [1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)

  def doubled(features, labels, mode):
    spec = model_fn(features, labels, mode)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.2)
    return spec._replace(train_op=optimizer.minimize(
        spec.loss, global_step=tf.compat.v1.train.get_global_step()))

  def input_fn():
    return tf.data.Dataset.from_tensors(
        ({"x": np.ones([4], np.float32)}, np.ones([4], np.float32))).repeat()

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  est._model_fn = doubled  # pylint: disable=protected-access
  assert est._model_fn is doubled  # pylint: disable=protected-access
  est.train(input_fn, steps=1)
  # One step of 0.2 from 0: w = 0.2 * 2 (the 0.1 model_fn gives 0.2).
  np.testing.assert_allclose(est.get_variable_value("w"), [0.4], rtol=1e-6)
  with pytest.raises(ValueError):
    est._model_fn = lambda a, b, c, d, e, f: None  # pylint: disable=protected-access
