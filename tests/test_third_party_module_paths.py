"""Module paths of tensorflow-estimator 2.15 that other packages import.

tensorflow-lattice 2.0's canned estimators (run unchanged against TF 2.15
and here, by hand) import `canned.optimizers` for
`get_optimizer_instance_v2` and call the estimator module's
`maybe_overwrite_model_dir_and_session_config`; before these were
registered, `import tensorflow_lattice` failed after `install()` with
ImportError.

DeepCTR 0.9.4's estimator models (run unchanged against TF 2.15 and here, by
hand: finding G37) import `_Head` and `get_optimizer_instance` from TF 2.15's
forwarding paths `tensorflow.python.estimator.canned.head` and
`.canned.optimizers`, and subclass `_Head` for their own head.
"""

import os

import numpy as np

import pytest
import tensorflow as tf

import estimator_compat as tfe


def test_canned_optimizers_resolve_names_as_tf215():
  tfe.install()
  from tensorflow_estimator.python.estimator.canned import optimizers  # pylint: disable=g-import-not-at-top
  v1 = optimizers.get_optimizer_instance("Adagrad", learning_rate=0.1)
  assert isinstance(v1, tf.compat.v1.train.AdagradOptimizer)
  v2 = optimizers.get_optimizer_instance_v2("Adam", learning_rate=0.1)
  assert isinstance(v2, tf.keras.optimizers.legacy.Adam)
  assert float(v2.learning_rate) == pytest.approx(0.1)


def test_maybe_overwrite_model_dir_and_session_config(tmp_path):
  tfe.install()
  from tensorflow_estimator.python.estimator import estimator as estimator_lib  # pylint: disable=g-import-not-at-top
  overwrite = estimator_lib.maybe_overwrite_model_dir_and_session_config
  config = overwrite(None, str(tmp_path))
  assert isinstance(config, tfe.RunConfig)
  assert config.model_dir == str(tmp_path)
  assert config.session_config is not None
  kept = overwrite(tfe.RunConfig(model_dir=str(tmp_path / "a")), None)
  assert kept.model_dir == str(tmp_path / "a")
  temporary = overwrite(tfe.RunConfig(), None)
  assert os.path.isdir(temporary.model_dir)
  with pytest.raises(ValueError, match="`model_dir` are set both in "
                     "constructor and `RunConfig`, but with different"):
    overwrite(tfe.RunConfig(model_dir=str(tmp_path / "a")),
              str(tmp_path / "b"))
  with pytest.raises(ValueError):
    overwrite("not a config", None)


def test_an_empty_model_dir_argument_means_none_as_in_tf215(tmp_path):
  tfe.install()
  from tensorflow_estimator.python.estimator import estimator as estimator_lib  # pylint: disable=g-import-not-at-top
  overwrite = estimator_lib.maybe_overwrite_model_dir_and_session_config
  kept = overwrite(tfe.RunConfig(model_dir=str(tmp_path)), "")
  assert kept.model_dir == str(tmp_path)
  assert os.path.isdir(overwrite(None, "").model_dir)


def _canned_head_module():
  tfe.install()
  from tensorflow.python.estimator.canned import head  # pylint: disable=g-import-not-at-top,g-direct-tensorflow-import
  import tensorflow_estimator.python.estimator.canned.head as real_path  # pylint: disable=g-import-not-at-top
  assert head is real_path
  return head


class _SquaredErrorHead:
  """A custom TF1 head as legacy programs wrote one: its own loss and spec."""

  def __init__(self, name=None):
    self._name = name

  @property
  def name(self):
    return self._name

  @property
  def logits_dimension(self):
    return 1

  def create_loss(self, features, mode, logits, labels):
    del features, mode
    return tf.compat.v1.losses.mean_squared_error(
        labels, logits, reduction=tf.compat.v1.losses.Reduction.NONE)

  def create_estimator_spec(self, features, mode, logits, labels=None,
                            train_op_fn=None):
    logits = tf.reshape(logits, [-1, 1])
    if mode == tfe.ModeKeys.PREDICT:
      return tfe.EstimatorSpec(mode, predictions={"y": logits})
    unreduced = self.create_loss(features, mode, logits,
                                 tf.reshape(labels, [-1, 1]))
    loss = tf.reduce_sum(unreduced)
    key = self._summary_key("mse")
    return tfe.EstimatorSpec(
        mode, loss=loss, train_op=train_op_fn(loss),
        eval_metric_ops={key: tf.compat.v1.metrics.mean(unreduced)})


def _input_fn():
  x = np.arange(16, dtype=np.float32).reshape(8, 2) / 16.0
  y = (x @ np.array([[1.0], [-2.0]], np.float32)).astype(np.float32)
  return tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat()


def _train_op_fn(loss):
  return tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())


def _model_fn(make_head):
  def model_fn(features, labels, mode):
    logits = tf.compat.v1.layers.dense(
        features, 1, kernel_initializer=tf.compat.v1.ones_initializer())
    if make_head is None:  # the same model without a head
      loss = tf.reduce_sum(tf.compat.v1.losses.mean_squared_error(
          labels, logits, reduction=tf.compat.v1.losses.Reduction.NONE))
      return tfe.EstimatorSpec(mode, loss=loss,
                               train_op=_train_op_fn(loss))
    return make_head().create_estimator_spec(
        features=features, mode=mode, logits=logits, labels=labels,
        train_op_fn=_train_op_fn)
  return model_fn


def test_a_custom_head_subclassing_tf215s_head_trains(tmp_path):
  head = _canned_head_module()
  custom = type("CustomHead", (_SquaredErrorHead, head._Head), {  # pylint: disable=protected-access
      "_summary_key": lambda self, val: head._summary_key(self._name, val)})  # pylint: disable=protected-access
  with_head = tfe.Estimator(_model_fn(lambda: custom("h")),
                            model_dir=str(tmp_path / "head"))
  with_head.train(_input_fn, steps=3)
  plain = tfe.Estimator(_model_fn(None), model_dir=str(tmp_path / "plain"))
  plain.train(_input_fn, steps=3)
  kernel = with_head.get_variable_value("dense/kernel")
  np.testing.assert_array_equal(kernel, plain.get_variable_value(
      "dense/kernel"))
  assert not np.array_equal(kernel, np.ones_like(kernel))  # it trained
  metrics = with_head.evaluate(_input_fn, steps=2)
  assert set(metrics) == {"mse/h", "loss", "global_step"}


def test_tf215s_head_base_names_the_missing_method():
  head = _canned_head_module()
  bare = type("Bare", (head._Head,), {})()  # pylint: disable=protected-access
  # Not abstract at instantiation (as TF 2.15's, in Python 3).
  with pytest.raises(NotImplementedError, match="Calling an abstract"):
    _ = bare.name
  with pytest.raises(NotImplementedError,
                     match=r"must implement `create_estimator_spec\(\)` or "
                     r"_create_tpu_estimator_spec\(\)"):
    bare.create_estimator_spec(features={}, mode=tfe.ModeKeys.TRAIN,
                               logits=tf.zeros([1, 1]))

  class TPUHead(head._Head):  # pylint: disable=protected-access

    def _create_tpu_estimator_spec(self, features, mode, logits, labels=None,
                                   optimizer=None, train_op_fn=None,
                                   regularization_losses=None):
      return tfe.tpu.TPUEstimatorSpec(mode, predictions={"y": logits})

  spec = TPUHead().create_estimator_spec(
      features={}, mode=tfe.ModeKeys.PREDICT, logits=tf.zeros([1, 1]))
  assert isinstance(spec, tfe.EstimatorSpec)


def test_tf215s_private_head_factories():
  head = _canned_head_module()
  binary = head._binary_logistic_head_with_sigmoid_cross_entropy_loss(  # pylint: disable=protected-access
      name="b")
  multi = head._multi_class_head_with_softmax_cross_entropy_loss(3)  # pylint: disable=protected-access
  either = head._binary_logistic_or_multi_class_head(  # pylint: disable=protected-access
      2, None, None, tf.compat.v1.losses.Reduction.SUM)
  regression = head._regression_head(label_dimension=2)  # pylint: disable=protected-access
  for made in (binary, multi, either, regression):
    assert isinstance(made, head._Head)  # pylint: disable=protected-access
  assert (binary.name, multi.logits_dimension,
          regression.logits_dimension) == ("b", 3, 2)
  assert type(either) is type(binary)
  assert head._summary_key("b", "auc") == "auc/b"  # pylint: disable=protected-access
  assert head._summary_key(None, "auc") == "auc"  # pylint: disable=protected-access
  assert (head._DEFAULT_SERVING_KEY, head._PREDICT_SERVING_KEY) == (  # pylint: disable=protected-access
      "serving_default", "predict")
  with pytest.raises(ValueError, match="n_classes cannot be None"):
    head._multi_class_head_with_softmax_cross_entropy_loss(None)  # pylint: disable=protected-access


def test_tf215s_private_head_internals_exist_and_refuse_by_name():
  # tensorflow-privacy 0.8 binds these at import (finding G40): import
  # works, and using one names the gap and the fix.
  head = _canned_head_module()
  helpers = ("_all_class_ids", "_all_classes", "_append_update_ops",
             "_check_logits_final_dim", "_classification_output",
             "_create_eval_metrics_tuple", "_validate_loss_fn_args")
  for name in helpers:
    with pytest.raises(NotImplementedError,
                       match=f"^{name}: .*private TF1 head internals.*Fix: "):
      getattr(head, name)(tf.zeros([2, 1]), 2)
  for name in ("_BinaryLogisticHeadWithSigmoidCrossEntropyLoss",
               "_MultiClassHeadWithSoftmaxCrossEntropyLoss"):
    subclass = type("DPHead", (getattr(head, name),), {})  # as DP heads do
    with pytest.raises(NotImplementedError, match="^DPHead: .*Fix: "):
      subclass(n_classes=3)
