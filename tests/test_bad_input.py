"""Bad input fails fast with the problem and the fix, and writes nothing."""

import json
import os

import pytest
import tensorflow as tf

import estimator_compat as tfe
from tests import models

pytestmark = pytest.mark.usefixtures("engine")


def _spec_fn(**drop):
  """A model_fn whose TRAIN spec lacks the fields named in `drop`."""
  def model_fn(features, labels, mode, params):
    spec = models.classifier_fn(features, labels, mode, params)
    fields = dict(mode=mode, predictions=spec.predictions, loss=spec.loss,
                  train_op=spec.train_op)
    for name in drop:
      fields[name] = None
    return tfe.EstimatorSpec(**fields)
  return model_fn


def _assert_nothing_written(model_dir):
  assert models.checkpoint_files(str(model_dir)) == []
  assert not os.path.exists(os.path.join(str(model_dir), "checkpoint"))


def _per_example_loss_fn(static_rows=None):
  """A model_fn whose loss is per example: shape (None,), or (rows,)."""
  def model_fn(features, labels, mode):
    logits = tf.compat.v1.layers.dense(features["x"], models.CLASSES)
    loss = tf.keras.losses.sparse_categorical_crossentropy(
        labels, logits, from_logits=True)
    if static_rows is not None:
      loss = tf.ensure_shape(loss, [static_rows])
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)
  return model_fn


def test_loss_of_static_shape_with_more_values_is_refused(tmp_path):
  # As the Estimator: a static shape holding more than one value is refused
  # by EstimatorSpec, before anything is written.
  est = tfe.Estimator(_per_example_loss_fn(16), model_dir=str(tmp_path))
  with pytest.raises(ValueError, match=r"^Loss must be scalar, given: "
                     r".*shape=\(16,\).*Fix: reduce it"):
    est.train(models.input_fn(), steps=2)
  _assert_nothing_written(tmp_path)


def test_per_example_loss_fails_the_first_batch_of_more_than_one(tmp_path):
  # As the Estimator: a (None,) loss passes EstimatorSpec and is reshaped to
  # a scalar at run time, so a batch of 16 fails the first step (after
  # model.ckpt-0, as there), with the same error type; ours names the fix.
  est = tfe.Estimator(_per_example_loss_fn(), model_dir=str(tmp_path))
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"Loss must be scalar.*Fix: reduce it"):
    est.train(models.input_fn(), steps=2)
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-0")
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"Loss must be scalar.*Fix: reduce it"):
    est.evaluate(models.input_fn(num_epochs=1))


def test_per_example_loss_at_batch_size_one_trains_and_evaluates(tmp_path):
  est = tfe.Estimator(_per_example_loss_fn(), model_dir=str(tmp_path))
  est.train(models.input_fn(batch_size=1), steps=3)
  metrics = est.evaluate(models.input_fn(batch_size=1, num_epochs=1,
                                         rows=5))
  assert metrics["global_step"] == 3
  assert metrics["loss"] > 0


@pytest.mark.parametrize("returned", ["data/train.csv", 3.5])
def test_input_fn_returning_something_else(tmp_path, returned):
  est = models.estimator(tmp_path)
  with pytest.raises(TypeError, match="must return a tf.data.Dataset"):
    est.train(lambda: returned, steps=1)
  _assert_nothing_written(tmp_path)


@pytest.mark.parametrize("returned", [("a", "b", "c"), ["a", "b", "c"]])
def test_input_fn_returning_three_items(tmp_path, returned):
  est = models.estimator(tmp_path)
  with pytest.raises(ValueError, match=r"^input_fn should return \(features, "
                     r"labels\) as a len 2 tuple\..*of length 3.*Fix"):
    est.train(lambda: returned, steps=1)
  _assert_nothing_written(tmp_path)


def test_input_fn_result_passed_instead_of_input_fn(tmp_path):
  est = models.estimator(tmp_path)
  with pytest.raises(TypeError, match="pass the function itself"):
    est.train(tf.data.Dataset.range(3), steps=1)
  _assert_nothing_written(tmp_path)


def test_tf_config_not_json(tmp_path, monkeypatch):
  monkeypatch.setenv("TF_CONFIG", "{cluster: chief}")
  with pytest.raises(ValueError, match="TF_CONFIG is not valid JSON.*Fix"):
    models.estimator(tmp_path).train(models.input_fn(), steps=1)
  _assert_nothing_written(tmp_path)


def test_cluster_without_chief(tmp_path, monkeypatch):
  monkeypatch.setenv("TF_CONFIG", json.dumps({
      "cluster": {"worker": ["localhost:1", "localhost:2"]},
      "task": {"type": "worker", "index": 0}}))
  with pytest.raises(ValueError, match='must have one "chief" node.*Fix: add'):
    models.estimator(tmp_path).train(models.input_fn(), steps=1)
  _assert_nothing_written(tmp_path)


def test_task_index_out_of_range(tmp_path, monkeypatch):
  monkeypatch.setenv("TF_CONFIG", json.dumps({
      "cluster": {"chief": ["localhost:1"], "worker": ["localhost:2"]},
      "task": {"type": "worker", "index": 3}}))
  with pytest.raises(ValueError,
                     match="(?s)3 is not a valid task_id.*Fix.*from 0 to 0"):
    models.estimator(tmp_path).train(models.input_fn(), steps=1)
  _assert_nothing_written(tmp_path)


@pytest.mark.parametrize("missing,message", [
    ("train_op", "Missing train_op"),
    ("loss", "Missing loss"),
])
def test_train_spec_missing_field(tmp_path, missing, message):
  est = models.estimator(tmp_path, model_fn=_spec_fn(**{missing: True}))
  with pytest.raises(ValueError, match=message + ".*Fix"):
    est.train(models.input_fn(), steps=1)
  _assert_nothing_written(tmp_path)


def test_predict_spec_missing_predictions(tmp_path):
  est = models.estimator(tmp_path)
  est.train(models.input_fn(), steps=1)
  before = models.checkpoint_files(str(tmp_path))

  def model_fn(features, labels, mode, params):
    spec = models.classifier_fn(features, labels, mode, params)
    return tfe.EstimatorSpec(mode, loss=spec.loss if spec.loss is not None
                             else None)

  broken = models.estimator(tmp_path, model_fn=model_fn)
  with pytest.raises(ValueError, match="Missing predictions.*Fix"):
    list(broken.predict(models.input_fn(num_epochs=1, labels=False)))
  assert models.checkpoint_files(str(tmp_path)) == before


def test_model_fn_returning_no_estimator_spec(tmp_path):
  def model_fn(features, labels, mode):
    return {"loss": tf.reduce_mean(features["x"])}

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  with pytest.raises(ValueError, match="^model_fn should return an "
                     "EstimatorSpec.*dict.*Fix"):
    est.train(models.input_fn(), steps=1)
  _assert_nothing_written(tmp_path)


def test_model_fn_without_labels_argument(tmp_path):
  def model_fn(features, mode):
    raise AssertionError("must not be called")

  est = tfe.Estimator(model_fn, model_dir=str(tmp_path))
  with pytest.raises(ValueError, match="^model_fn does not take labels, but "
                     "input_fn returns labels.*Fix"):
    est.train(models.input_fn(), steps=1)
  _assert_nothing_written(tmp_path)


def test_params_without_params_argument(tmp_path):
  def model_fn(features, labels, mode):
    raise AssertionError("must not be called")

  with pytest.raises(ValueError, match=r"^model_fn \(.*\) does not include "
                     r"params argument, but params \(\{'a': 1\}\) is passed to "
                     r"Estimator\..*Fix"):
    tfe.Estimator(model_fn, model_dir=str(tmp_path), params={"a": 1})


def test_checkpoint_with_other_shapes_is_left_untouched(tmp_path):
  est = models.estimator(tmp_path, params={"hidden": 4})
  est.train(models.input_fn(), steps=3)
  snapshot = {name: os.stat(tmp_path / name).st_mtime_ns
              for name in os.listdir(tmp_path)}
  with open(tmp_path / "checkpoint") as f:
    checkpoint_state = f.read()
  wider = models.estimator(tmp_path, params={"hidden": 6})
  with pytest.raises(ValueError, match=r"'dense/kernel' with shape \[4, 4\].*"
                     r"shape \[4, 6\].*Nothing was changed on disk.*Fix"):
    wider.train(models.input_fn(), steps=3)
  with pytest.raises(ValueError, match="'dense/kernel'"):
    wider.evaluate(models.input_fn(num_epochs=1))
  with pytest.raises(ValueError, match="'dense/kernel'"):
    list(wider.predict(models.input_fn(num_epochs=1, labels=False)))
  assert {name: os.stat(tmp_path / name).st_mtime_ns
          for name in os.listdir(tmp_path)} == snapshot
  with open(tmp_path / "checkpoint") as f:
    assert f.read() == checkpoint_state
  assert est.get_variable_value("global_step") == 3


def test_checkpoint_missing_variables(tmp_path):
  est = models.estimator(tmp_path)
  est.train(models.input_fn(), steps=1)

  def bigger_fn(features, labels, mode, params):
    tf.compat.v1.get_variable("extra", [2])
    return models.classifier_fn(features, labels, mode, params)

  # TF 2.15's type and first words (its Saver's restore failed), then ours.
  with pytest.raises(tf.errors.NotFoundError,
                     match=r"(?s)^Restoring from checkpoint failed\. .*"
                     r"Key extra not found in checkpoint.*"
                     r"lacks variable\(s\).*'extra'.* Fix: ") as raised:
    models.estimator(tmp_path, model_fn=bigger_fn).train(models.input_fn(),
                                                         steps=1)
  assert isinstance(raised.value, ValueError)  # as this error was before


def test_saving_listeners_need_checkpoints(tmp_path):
  est = models.estimator(tmp_path, save_checkpoints_secs=None,
                         save_checkpoints_steps=None)
  with pytest.raises(ValueError, match="^There should be a CheckpointSaverHook "
                     "to use saving_listeners.*Fix"):
    est.train(models.input_fn(), steps=1,
              saving_listeners=[tfe.CheckpointSaverListener()])
  _assert_nothing_written(tmp_path)


def test_bad_hooks_and_config(tmp_path):
  est = models.estimator(tmp_path)
  with pytest.raises(TypeError, match="^Hooks must be a SessionRunHook, "
                     "given: .*Fix"):
    est.train(models.input_fn(), hooks=[lambda: None], steps=1)
  with pytest.raises(ValueError, match="^config must be an instance of "
                     "`RunConfig`, but provided .*Fix"):
    tfe.Estimator(models.classifier_fn, config={"model_dir": "x"})
  _assert_nothing_written(tmp_path)
