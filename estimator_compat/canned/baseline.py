"""Baseline estimators: a model that learns one bias per output, ignoring
the features (the prior of the labels).

`BaselineClassifier`, `BaselineRegressor`, `BaselineEstimator`, in the two
families of TensorFlow 2.15: `tf.estimator.*` (the `...V2` classes: Keras
legacy optimizers, the TF2 heads, the variable `baseline/bias`) and
`tf.compat.v1.estimator.*` (`tf.compat.v1.train` optimizers, the TF1 heads,
`get_variable('baseline/bias')`). Named optimizers get learning rate 0.3;
the default is 'Ftrl'.
"""

from typing import Any, Callable, Dict, List, Optional, Tuple

import tensorflow as tf
from tensorflow.python.feature_column import feature_column as fc_v1
from tensorflow.python.feature_column import feature_column_v2 as fc_v2

from estimator_compat import estimator as estimator_lib
from estimator_compat.canned import linear_heads
from estimator_compat.canned import optimizers
from estimator_compat.mode_keys import ModeKeys

_LEARNING_RATE = optimizers.BASELINE_LEARNING_RATE
_SUM_OVER_BATCH_SIZE = "sum_over_batch_size"


def _weight_column_key(weight_column: Any, numeric_type: type,
                       type_name: str) -> Optional[str]:
  if weight_column is None:
    return None
  if isinstance(weight_column, str):
    return weight_column
  if not isinstance(weight_column, numeric_type):
    raise TypeError(f"Weight column must be either a string or {type_name}. "
                    f"Given type: {type(weight_column)}.")
  return weight_column.key


def weight_column_key_v1(weight_column: Any) -> Optional[str]:
  return _weight_column_key(weight_column, fc_v1._NumericColumn,  # pylint: disable=protected-access
                            "_NumericColumn")


def weight_column_key_v2(weight_column: Any) -> Optional[str]:
  return _weight_column_key(weight_column, fc_v2.NumericColumn,
                            "NumericColumn")


def batch_size_and_checks(features: Dict[str, Any],
                          weight_column_key: Optional[str]
                          ) -> Tuple[List[Any], tf.Tensor]:
  """The batch size (of the first feature) and asserts that all features
  but the weight have it."""
  checks, batch_size = [], None
  for key, feature in features.items():
    if key == weight_column_key:
      continue
    first_dim = tf.compat.v1.shape(feature)[0]
    if batch_size is None:
      batch_size = first_dim
    else:
      checks.append(tf.compat.v1.debugging.assert_equal(batch_size,
                                                        first_dim))
  return checks, batch_size


def baseline_model_fn_v1(features, labels, mode, head, optimizer,
                         weight_column=None):
  """The model_fn of the v1 (`tf.compat.v1.estimator`) Baseline*."""
  checks, batch_size = batch_size_and_checks(
      features, weight_column_key_v1(weight_column))
  units = head.logits_dimension
  with tf.control_dependencies(checks):
    with tf.compat.v1.variable_scope("baseline"):
      bias = tf.compat.v1.get_variable(
          "bias", shape=[units], initializer=tf.compat.v1.zeros_initializer)
      logits = tf.math.multiply(bias, tf.ones([batch_size, units]))

  def train_op_fn(loss):
    opt = optimizers.get_optimizer_instance(optimizer,
                                            learning_rate=_LEARNING_RATE)
    return opt.minimize(loss,
                        global_step=tf.compat.v1.train.get_global_step())

  return head.create_estimator_spec(features=features, mode=mode,
                                    logits=logits, labels=labels,
                                    train_op_fn=train_op_fn)


def baseline_model_fn_v2(features, labels, mode, head, optimizer,
                         weight_column=None,
                         loss_reduction: str = _SUM_OVER_BATCH_SIZE):
  """The model_fn of the v2 (`tf.estimator`) Baseline*."""
  checks, batch_size = batch_size_and_checks(
      features, weight_column_key_v2(weight_column))
  units = head.logits_dimension
  with tf.control_dependencies(checks):
    with tf.name_scope("baseline"):
      # A callable initial value is computed outside the model_fn (init
      # scope): TF 2.15 gave a tensor, which waited on the batch-size checks,
      # so its initializer read the input and failed with more than one
      # feature (a decision in docs/decisions.md).
      bias = tf.Variable(initial_value=lambda: tf.zeros([units]),
                         name="bias")
      logits = tf.math.multiply(bias, tf.ones([batch_size, units]))
  opt = None
  if mode == ModeKeys.TRAIN:
    opt = optimizers.get_optimizer_instance_v2(optimizer,
                                               learning_rate=_LEARNING_RATE)
    opt.iterations = tf.compat.v1.train.get_or_create_global_step()

  def train_op_fn(loss):
    if loss_reduction == _SUM_OVER_BATCH_SIZE:
      replicas = tf.distribute.get_strategy().num_replicas_in_sync
      if replicas > 1:
        loss *= 1.0 / replicas
    return opt.get_updates(loss, [bias])[0]

  return head.create_estimator_spec(features=features, mode=mode,
                                    logits=logits, labels=labels,
                                    train_op_fn=train_op_fn)


def _v1_model_fn(head, optimizer, weight_column=None) -> Callable[..., Any]:
  def model_fn(features, labels, mode, config):
    del config  # Unused.
    return baseline_model_fn_v1(features, labels, mode, head, optimizer,
                                weight_column)
  return model_fn


def _v2_model_fn(head, optimizer, weight_column=None,
                 loss_reduction=_SUM_OVER_BATCH_SIZE) -> Callable[..., Any]:
  def model_fn(features, labels, mode, config):
    del config  # Unused.
    return baseline_model_fn_v2(features, labels, mode, head, optimizer,
                                weight_column, loss_reduction)
  return model_fn


class BaselineClassifierV2(estimator_lib.Estimator):
  """`tf.estimator.BaselineClassifier`: predicts the label distribution
  (sigmoid cross entropy for 2 classes, softmax otherwise)."""

  def __init__(self, model_dir=None, n_classes: int = 2, weight_column=None,
               label_vocabulary=None, optimizer="Ftrl", config=None,
               loss_reduction=_SUM_OVER_BATCH_SIZE):
    head = linear_heads.classification_head_v2(
        n_classes, weight_column, label_vocabulary, loss_reduction)
    super().__init__(
        model_fn=_v2_model_fn(head, optimizer, weight_column, loss_reduction),
        model_dir=model_dir, config=config)


class BaselineClassifier(estimator_lib.Estimator):
  """`tf.compat.v1.estimator.BaselineClassifier` (TF1 head and optimizers,
  loss reduction SUM)."""

  def __init__(self, model_dir=None, n_classes: int = 2, weight_column=None,
               label_vocabulary=None, optimizer="Ftrl", config=None,
               loss_reduction=tf.compat.v1.losses.Reduction.SUM):
    head = linear_heads.classification_head_v1(
        n_classes, weight_column, label_vocabulary, loss_reduction)
    super().__init__(model_fn=_v1_model_fn(head, optimizer, weight_column),
                     model_dir=model_dir, config=config)


class BaselineRegressorV2(estimator_lib.Estimator):
  """`tf.estimator.BaselineRegressor`: predicts the label mean."""

  def __init__(self, model_dir=None, label_dimension: int = 1,
               weight_column=None, optimizer="Ftrl", config=None,
               loss_reduction=_SUM_OVER_BATCH_SIZE):
    head = linear_heads.regression_head_v2(label_dimension, weight_column,
                                           loss_reduction)
    # As in TF 2.15, the weight column is not excluded from the batch-size
    # checks here (only BaselineClassifier excludes it).
    super().__init__(model_fn=_v2_model_fn(head, optimizer),
                     model_dir=model_dir, config=config)


class BaselineRegressor(estimator_lib.Estimator):
  """`tf.compat.v1.estimator.BaselineRegressor` (TF1 head and optimizers,
  loss reduction SUM)."""

  def __init__(self, model_dir=None, label_dimension: int = 1,
               weight_column=None, optimizer="Ftrl", config=None,
               loss_reduction=tf.compat.v1.losses.Reduction.SUM):
    head = linear_heads.regression_head_v1(label_dimension, weight_column,
                                           loss_reduction)
    super().__init__(model_fn=_v1_model_fn(head, optimizer),
                     model_dir=model_dir, config=config)


class BaselineEstimatorV2(estimator_lib.Estimator):
  """`tf.estimator.BaselineEstimator`: one bias per logit of `head`."""

  def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None):
    super().__init__(model_fn=_v2_model_fn(head, optimizer),
                     model_dir=model_dir, config=config)


class BaselineEstimator(estimator_lib.Estimator):
  """`tf.compat.v1.estimator.BaselineEstimator`: one bias per logit of
  `head` (TF1 optimizers)."""

  def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None):
    super().__init__(model_fn=_v1_model_fn(head, optimizer),
                     model_dir=model_dir, config=config)
