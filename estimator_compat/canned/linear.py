"""Linear estimators: `LinearClassifier`, `LinearRegressor`, `LinearEstimator`.

Two families, as in TensorFlow 2.15:

* `tf.estimator.*` (the `...V2` classes here): the Keras `LinearModel` over
  v2 feature columns, Keras legacy optimizers (a name, an instance or a
  callable) whose slots live under `training/<Optimizer>/...`, the TF2 heads,
  loss reduction `SUM_OVER_BATCH_SIZE`.
* `tf.compat.v1.estimator.*`: the v1 linear model inside
  `variable_scope("linear", partitioner=...)` (`.../weights/part_<i>`),
  `tf.compat.v1.train` optimizers, the TF1 heads, loss reduction `SUM`.

The default `optimizer='Ftrl'` gets learning rate 0.2; `optimizer=None`
gets Ftrl with `min(0.2, 1/sqrt(number of columns))`. Variable names are
TensorFlow 2.15's (`linear/linear_model/<column>/weights`,
`linear/linear_model/bias_weights`), so model_dirs move both ways.
"""

from typing import Any, Callable, Dict

import tensorflow as tf

from estimator_compat import estimator as estimator_lib
from estimator_compat.canned import linear_heads
from estimator_compat.canned import linear_logits
from estimator_compat.canned import optimizers
from estimator_compat.canned.sdca import linear_sdca
from estimator_compat.mode_keys import ModeKeys

# The real module's Keras linear model (its tests use linear.LinearModel).
LinearModel = linear_logits.LinearModel
# tf.estimator.experimental.LinearSDCA, an `optimizer` of the Linear
# classifiers and regressors.
LinearSDCA = linear_sdca.LinearSDCA

_LEARNING_RATE = optimizers.LINEAR_LEARNING_RATE
_SUM_OVER_BATCH_SIZE = "sum_over_batch_size"


def _check_features(features: Any) -> None:
  if not isinstance(features, dict):
    raise ValueError("features should be a dictionary of `Tensor`s. Given "
                     f"type: {type(features)}")


def linear_model_fn_v2(features, labels, mode, head, feature_columns,
                       optimizer, sparse_combiner: str = "sum"):
  """The model_fn of the v2 (`tf.estimator`) linear estimators."""
  _check_features(features)
  if linear_sdca.is_sdca(optimizer):
    assert sparse_combiner == "sum"
    return linear_sdca.sdca_model_fn(features, labels, mode, head,
                                     feature_columns, optimizer)
  logits, variables = linear_logits.linear_logits_v2(
      features, feature_columns, head.logits_dimension, sparse_combiner)
  if mode == ModeKeys.TRAIN:
    optimizer = optimizers.get_optimizer_instance_v2(
        optimizer or optimizers.default_linear_optimizer_v2(feature_columns),
        learning_rate=_LEARNING_RATE)
    optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
  else:
    optimizer = None
  return head.create_estimator_spec(
      features=features, mode=mode, labels=labels, optimizer=optimizer,
      trainable_variables=variables, logits=logits)


def linear_model_fn_v1(features, labels, mode, head, feature_columns,
                       optimizer, partitioner, config,
                       sparse_combiner: str = "sum"):
  """The model_fn of the v1 (`tf.compat.v1.estimator`) linear estimators."""
  _check_features(features)
  num_ps_replicas = config.num_ps_replicas if config else 0
  partitioner = partitioner or tf.compat.v1.min_max_variable_partitioner(
      max_partitions=num_ps_replicas, min_slice_size=64 << 20)
  with tf.compat.v1.variable_scope("linear", values=tuple(features.values()),
                                   partitioner=partitioner):
    if linear_sdca.is_sdca(optimizer):
      assert sparse_combiner == "sum"
      return linear_sdca.sdca_model_fn(features, labels, mode, head,
                                       feature_columns, optimizer)
    logits, _ = linear_logits.linear_logits_v1(
        features, feature_columns, head.logits_dimension, sparse_combiner)
    if mode == ModeKeys.TRAIN:
      linear_logits.check_partitioned_training_engine()
    optimizer = optimizers.get_optimizer_instance(
        optimizer or optimizers.default_linear_optimizer(feature_columns),
        learning_rate=_LEARNING_RATE)
    return head.create_estimator_spec(
        features=features, mode=mode, labels=labels, optimizer=optimizer,
        logits=logits)


def _v2_model_fn(head, feature_columns, optimizer,
                 sparse_combiner) -> Callable[..., Any]:
  def model_fn(features, labels, mode, config):
    del config  # The v2 linear model does not partition.
    return linear_model_fn_v2(features, labels, mode, head,
                              tuple(feature_columns or []), optimizer,
                              sparse_combiner)
  return model_fn


def _v1_model_fn(head, feature_columns, optimizer, partitioner,
                 sparse_combiner) -> Callable[..., Any]:
  def model_fn(features, labels, mode, config):
    return linear_model_fn_v1(features, labels, mode, head,
                              tuple(feature_columns or []), optimizer,
                              partitioner, config, sparse_combiner)
  return model_fn


class LinearClassifierV2(estimator_lib.Estimator):
  """`tf.estimator.LinearClassifier`: a linear model classifying into
  `n_classes` classes (sigmoid cross entropy for 2, softmax otherwise)."""

  def __init__(self, feature_columns, model_dir=None, n_classes: int = 2,
               weight_column=None, label_vocabulary=None, optimizer="Ftrl",
               config=None, warm_start_from=None,
               loss_reduction=_SUM_OVER_BATCH_SIZE,
               sparse_combiner: str = "sum"):
    linear_sdca.check_classifier(feature_columns, n_classes, optimizer,
                                 sparse_combiner)
    head = linear_heads.classification_head_v2(
        n_classes, weight_column, label_vocabulary, loss_reduction)
    super().__init__(
        model_fn=_v2_model_fn(head, feature_columns, optimizer,
                              sparse_combiner),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearClassifier(estimator_lib.Estimator):
  """`tf.compat.v1.estimator.LinearClassifier`: the TF1 linear classifier
  (v1 optimizers, partitioned weights, loss reduction SUM)."""

  def __init__(self, feature_columns, model_dir=None, n_classes: int = 2,
               weight_column=None, label_vocabulary=None, optimizer="Ftrl",
               config=None, partitioner=None, warm_start_from=None,
               loss_reduction=tf.compat.v1.losses.Reduction.SUM,
               sparse_combiner: str = "sum"):
    linear_sdca.check_classifier(feature_columns, n_classes, optimizer,
                                 sparse_combiner)
    head = linear_heads.classification_head_v1(
        n_classes, weight_column, label_vocabulary, loss_reduction)
    super().__init__(
        model_fn=_v1_model_fn(head, feature_columns, optimizer, partitioner,
                              sparse_combiner),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearRegressorV2(estimator_lib.Estimator):
  """`tf.estimator.LinearRegressor`: linear regression (mean squared error)
  on `label_dimension` targets."""

  def __init__(self, feature_columns, model_dir=None,
               label_dimension: int = 1, weight_column=None,
               optimizer="Ftrl", config=None, warm_start_from=None,
               loss_reduction=_SUM_OVER_BATCH_SIZE,
               sparse_combiner: str = "sum"):
    linear_sdca.check_regressor(feature_columns, label_dimension, optimizer,
                                sparse_combiner)
    head = linear_heads.regression_head_v2(label_dimension, weight_column,
                                           loss_reduction)
    super().__init__(
        model_fn=_v2_model_fn(head, feature_columns, optimizer,
                              sparse_combiner),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearRegressor(estimator_lib.Estimator):
  """`tf.compat.v1.estimator.LinearRegressor`: the TF1 linear regressor."""

  def __init__(self, feature_columns, model_dir=None,
               label_dimension: int = 1, weight_column=None,
               optimizer="Ftrl", config=None, partitioner=None,
               warm_start_from=None,
               loss_reduction=tf.compat.v1.losses.Reduction.SUM,
               sparse_combiner: str = "sum"):
    linear_sdca.check_regressor(feature_columns, label_dimension, optimizer,
                                sparse_combiner)
    head = linear_heads.regression_head_v1(label_dimension, weight_column,
                                           loss_reduction)
    super().__init__(
        model_fn=_v1_model_fn(head, feature_columns, optimizer, partitioner,
                              sparse_combiner),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearEstimatorV2(estimator_lib.Estimator):
  """`tf.estimator.LinearEstimator`: a linear model with the given `Head`."""

  def __init__(self, head, feature_columns, model_dir=None,
               optimizer="Ftrl", config=None, sparse_combiner: str = "sum",
               warm_start_from=None):
    super().__init__(
        model_fn=_v2_model_fn(head, feature_columns, optimizer,
                              sparse_combiner),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearEstimator(estimator_lib.Estimator):
  """`tf.compat.v1.estimator.LinearEstimator`: the TF1 linear model with the
  given head."""

  def __init__(self, head, feature_columns, model_dir=None,
               optimizer="Ftrl", config=None, partitioner=None,
               sparse_combiner: str = "sum", warm_start_from=None):
    super().__init__(
        model_fn=_v1_model_fn(head, feature_columns, optimizer, partitioner,
                              sparse_combiner),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


def linear_logit_fn_builder(units: int, feature_columns,
                            sparse_combiner: str = "sum"
                            ) -> Callable[[Dict[str, Any]], tf.Tensor]:
  """`tf.compat.v1.estimator.experimental.linear_logit_fn_builder`.

  Returns `logit_fn(features)`, the v1 linear model's logits (to be called
  inside the caller's variable scope).
  """

  def linear_logit_fn(features):
    logits, _ = linear_logits.linear_logits_v1(features, feature_columns,
                                               units, sparse_combiner)
    return logits
  return linear_logit_fn
