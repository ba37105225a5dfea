"""Wide & deep: DNNLinearCombined{Classifier,Regressor,Estimator}, v2 and v1.

The logits are the sum of a linear model (`linear/linear_model/...`, from
canned/linear_logits.py) and a DNN (`dnn/...`, canned/dnn_model.py), each
trained by its own optimizer, as in TensorFlow 2.15's
`canned/dnn_linear_combined.py`:

* v2: Keras legacy optimizers, default Adagrad 0.001 for the DNN and Ftrl
  `min(0.005, 1/sqrt(#linear columns))` for the linear part, applied with
  `get_updates` under the head's `training` scope; the DNN's optimizer (or
  the linear one without a DNN) increments global_step.
* v1: `tf.compat.v1.train` optimizers with the same default rates, variables
  partitioned as in the v1 DNN, each optimizer minimizing over the trainable
  variables of its scope, then global_step incremented after both.
"""

from typing import Any, Callable, Iterable, List, Optional, Sequence

import tensorflow as tf

from estimator_compat.canned import dnn_heads
from estimator_compat.canned import dnn_model
from estimator_compat.canned import linear_logits
from estimator_compat.canned import optimizers
from estimator_compat.canned.dnn import dnn_logit_fn_builder
from estimator_compat.canned.dnn import validate_features
from estimator_compat.estimator import Estimator
from estimator_compat.mode_keys import ModeKeys


def _check_no_sync_replicas_optimizer(optimizer: Any) -> None:
  if isinstance(optimizer, tf.compat.v1.train.SyncReplicasOptimizer):
    raise ValueError(
        "SyncReplicasOptimizer does not support multi optimizers case. "
        "Therefore, it is not supported in DNNLinearCombined model. If you "
        "want to use this optimizer, please use either DNN or Linear model.")


def validate_feature_columns(linear_feature_columns: Any,
                             dnn_feature_columns: Any) -> List[Any]:
  """Both column lists together; one of them must be given."""
  columns = list(linear_feature_columns or []) + list(
      dnn_feature_columns or [])
  if not columns:
    raise ValueError(
        "Either linear_feature_columns or dnn_feature_columns must be "
        "defined.")
  return columns


def _check_model_fn_args(features, linear_feature_columns,
                         dnn_feature_columns) -> None:
  validate_features(features)
  if not linear_feature_columns and not dnn_feature_columns:
    raise ValueError(
        "Either linear_feature_columns or dnn_feature_columns must be "
        "defined.")


def _hidden_units(dnn_hidden_units):
  if not dnn_hidden_units:
    raise ValueError(
        "dnn_hidden_units must be defined when dnn_feature_columns is "
        "specified.")
  return dnn_hidden_units


def _sum_logits(dnn_logits, linear_logits_value):
  if dnn_logits is not None and linear_logits_value is not None:
    return dnn_logits + linear_logits_value
  return dnn_logits if dnn_logits is not None else linear_logits_value


def dnn_linear_combined_model_fn_v2(
    features, labels, mode, head, linear_feature_columns=None,
    linear_optimizer="Ftrl", dnn_feature_columns=None,
    dnn_optimizer="Adagrad", dnn_hidden_units=None,
    dnn_activation_fn=tf.nn.relu, dnn_dropout=None, config=None,
    batch_norm=False, linear_sparse_combiner="sum",
    loss_reduction=dnn_heads.SUM_OVER_BATCH_SIZE):
  """The v2 wide & deep model_fn."""
  _check_model_fn_args(features, linear_feature_columns, dnn_feature_columns)
  del config
  training = mode == ModeKeys.TRAIN
  dnn_logits = linear_part = None
  if dnn_feature_columns:
    if training:
      dnn_optimizer = optimizers.get_optimizer_instance_v2(
          dnn_optimizer, learning_rate=optimizers.COMBINED_DNN_LEARNING_RATE)
      _check_no_sync_replicas_optimizer(dnn_optimizer)
    dnn_logits, dnn_variables, dnn_updates = dnn_model.build_logits_v2(
        head.logits_dimension, _hidden_units(dnn_hidden_units),
        dnn_feature_columns, dnn_activation_fn, dnn_dropout, batch_norm,
        features, mode)
  if linear_feature_columns:
    if training:
      linear_optimizer = optimizers.get_optimizer_instance_v2(
          linear_optimizer,
          learning_rate=optimizers.combined_linear_learning_rate(
              len(linear_feature_columns)))
      _check_no_sync_replicas_optimizer(linear_optimizer)
    linear_part, linear_variables = linear_logits.linear_logits_v2(
        features, linear_feature_columns, head.logits_dimension,
        sparse_combiner=linear_sparse_combiner)
    dnn_model.add_layer_summary(linear_part, "linear")
  logits = _sum_logits(dnn_logits, linear_part)

  def train_op_fn(loss):
    if loss_reduction == dnn_heads.SUM_OVER_BATCH_SIZE:
      replicas = tf.distribute.get_strategy().num_replicas_in_sync
      if replicas > 1:
        loss *= 1.0 / replicas
    train_ops = []
    if dnn_logits is not None:
      train_ops.extend(dnn_optimizer.get_updates(loss, dnn_variables))
      train_ops.extend(dnn_updates or [])
    if linear_part is not None:
      train_ops.extend(linear_optimizer.get_updates(loss, linear_variables))
    return tf.group(*train_ops)

  if training:
    # One optimizer increments global_step, the step hooks count on.
    stepping = dnn_optimizer if dnn_logits is not None else linear_optimizer
    stepping.iterations = tf.compat.v1.train.get_or_create_global_step()
  return head.create_estimator_spec(
      features=features, mode=mode, labels=labels, train_op_fn=train_op_fn,
      logits=logits)


def dnn_linear_combined_model_fn_v1(
    features, labels, mode, head, linear_feature_columns=None,
    linear_optimizer="Ftrl", dnn_feature_columns=None,
    dnn_optimizer="Adagrad", dnn_hidden_units=None,
    dnn_activation_fn=tf.nn.relu, dnn_dropout=None,
    input_layer_partitioner=None, config=None, batch_norm=False,
    linear_sparse_combiner="sum"):
  """The v1 wide & deep model_fn: partitioned variables, TF1 optimizers."""
  _check_model_fn_args(features, linear_feature_columns, dnn_feature_columns)
  dnn_model.check_partitioned_training(mode, "DNNLinearCombined estimator")
  num_ps_replicas = config.num_ps_replicas if config else 0
  dnn_partitioner, default_input_partitioner = (
      dnn_model.default_partitioners(num_ps_replicas))
  input_layer_partitioner = (input_layer_partitioner or
                             default_input_partitioner)
  dnn_logits = linear_part = None
  if dnn_feature_columns:
    dnn_optimizer = optimizers.get_optimizer_instance(
        dnn_optimizer, learning_rate=optimizers.COMBINED_DNN_LEARNING_RATE)
    _check_no_sync_replicas_optimizer(dnn_optimizer)
    hidden_units = _hidden_units(dnn_hidden_units)
    with dnn_model.dnn_scope_v1(features, dnn_partitioner) as scope:
      dnn_scope = scope.name
      logit_fn = dnn_logit_fn_builder(
          head.logits_dimension, hidden_units, dnn_feature_columns,
          dnn_activation_fn, dnn_dropout, input_layer_partitioner,
          batch_norm)
      dnn_logits = logit_fn(features=features, mode=mode)
  if linear_feature_columns:
    linear_optimizer = optimizers.get_optimizer_instance(
        linear_optimizer,
        learning_rate=optimizers.combined_linear_learning_rate(
            len(linear_feature_columns)))
    _check_no_sync_replicas_optimizer(linear_optimizer)
    with tf.compat.v1.variable_scope(
        "linear", values=tuple(features.values()),
        partitioner=input_layer_partitioner) as scope:
      linear_scope = scope.name
      linear_part, _ = linear_logits.linear_logits_v1(
          features, linear_feature_columns, head.logits_dimension,
          sparse_combiner=linear_sparse_combiner)
      dnn_model.add_layer_summary(linear_part, scope.name)
  logits = _sum_logits(dnn_logits, linear_part)

  def trainable(scope_name):
    return tf.compat.v1.get_collection(
        tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, scope=scope_name)

  def train_op_fn(loss):
    train_ops = []
    if dnn_logits is not None:
      train_ops.append(dnn_optimizer.minimize(
          loss, var_list=trainable(dnn_scope)))
    if linear_part is not None:
      train_ops.append(linear_optimizer.minimize(
          loss, var_list=trainable(linear_scope)))
    with tf.control_dependencies([tf.group(*train_ops)]):
      return tf.compat.v1.assign_add(
          tf.compat.v1.train.get_global_step(), 1).op

  return head.create_estimator_spec(
      features=features, mode=mode, labels=labels, train_op_fn=train_op_fn,
      logits=logits)


def _v2_model_fn(head, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                 dnn_activation_fn, dnn_dropout, batch_norm,
                 linear_sparse_combiner, loss_reduction):
  def model_fn(features, labels, mode, config):
    return dnn_linear_combined_model_fn_v2(
        features, labels, mode, head,
        linear_feature_columns=linear_feature_columns,
        linear_optimizer=linear_optimizer,
        dnn_feature_columns=dnn_feature_columns,
        dnn_optimizer=dnn_optimizer, dnn_hidden_units=dnn_hidden_units,
        dnn_activation_fn=dnn_activation_fn, dnn_dropout=dnn_dropout,
        config=config, batch_norm=batch_norm,
        linear_sparse_combiner=linear_sparse_combiner,
        loss_reduction=loss_reduction)
  return model_fn


def _v1_model_fn(head, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                 dnn_activation_fn, dnn_dropout, input_layer_partitioner,
                 batch_norm, linear_sparse_combiner):
  def model_fn(features, labels, mode, config):
    return dnn_linear_combined_model_fn_v1(
        features, labels, mode, head,
        linear_feature_columns=linear_feature_columns,
        linear_optimizer=linear_optimizer,
        dnn_feature_columns=dnn_feature_columns,
        dnn_optimizer=dnn_optimizer, dnn_hidden_units=dnn_hidden_units,
        dnn_activation_fn=dnn_activation_fn, dnn_dropout=dnn_dropout,
        input_layer_partitioner=input_layer_partitioner, config=config,
        batch_norm=batch_norm, linear_sparse_combiner=linear_sparse_combiner)
  return model_fn


class DNNLinearCombinedClassifierV2(Estimator):
  """`tf.estimator.DNNLinearCombinedClassifier` (wide & deep classifier)."""

  def __init__(self, model_dir: Optional[str] = None,
               linear_feature_columns: Optional[Sequence[Any]] = None,
               linear_optimizer: Any = "Ftrl",
               dnn_feature_columns: Optional[Sequence[Any]] = None,
               dnn_optimizer: Any = "Adagrad",
               dnn_hidden_units: Optional[Iterable[int]] = None,
               dnn_activation_fn: Callable = tf.nn.relu,
               dnn_dropout: Optional[float] = None, n_classes: int = 2,
               weight_column: Any = None,
               label_vocabulary: Optional[Sequence[str]] = None,
               config: Any = None, warm_start_from: Any = None,
               loss_reduction: str = dnn_heads.SUM_OVER_BATCH_SIZE,
               batch_norm: bool = False,
               linear_sparse_combiner: str = "sum") -> None:
    self._feature_columns = validate_feature_columns(linear_feature_columns,
                                                     dnn_feature_columns)
    head = dnn_heads.classifier_head_v2(n_classes, weight_column,
                                        label_vocabulary, loss_reduction)
    super().__init__(
        model_fn=_v2_model_fn(
            head, linear_feature_columns, linear_optimizer,
            dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
            dnn_activation_fn, dnn_dropout, batch_norm,
            linear_sparse_combiner, loss_reduction),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedRegressorV2(Estimator):
  """`tf.estimator.DNNLinearCombinedRegressor` (wide & deep regressor)."""

  def __init__(self, model_dir: Optional[str] = None,
               linear_feature_columns: Optional[Sequence[Any]] = None,
               linear_optimizer: Any = "Ftrl",
               dnn_feature_columns: Optional[Sequence[Any]] = None,
               dnn_optimizer: Any = "Adagrad",
               dnn_hidden_units: Optional[Iterable[int]] = None,
               dnn_activation_fn: Callable = tf.nn.relu,
               dnn_dropout: Optional[float] = None, label_dimension: int = 1,
               weight_column: Any = None, config: Any = None,
               warm_start_from: Any = None,
               loss_reduction: str = dnn_heads.SUM_OVER_BATCH_SIZE,
               batch_norm: bool = False,
               linear_sparse_combiner: str = "sum") -> None:
    self._feature_columns = validate_feature_columns(linear_feature_columns,
                                                     dnn_feature_columns)
    head = dnn_heads.regression_head_v2(label_dimension, weight_column,
                                        loss_reduction)
    super().__init__(
        model_fn=_v2_model_fn(
            head, linear_feature_columns, linear_optimizer,
            dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
            dnn_activation_fn, dnn_dropout, batch_norm,
            linear_sparse_combiner, loss_reduction),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedEstimatorV2(Estimator):
  """`tf.estimator.DNNLinearCombinedEstimator`: wide & deep with a head.

  As in TensorFlow 2.15 it takes no `warm_start_from`.
  """

  def __init__(self, head: Any, model_dir: Optional[str] = None,
               linear_feature_columns: Optional[Sequence[Any]] = None,
               linear_optimizer: Any = "Ftrl",
               dnn_feature_columns: Optional[Sequence[Any]] = None,
               dnn_optimizer: Any = "Adagrad",
               dnn_hidden_units: Optional[Iterable[int]] = None,
               dnn_activation_fn: Callable = tf.nn.relu,
               dnn_dropout: Optional[float] = None, config: Any = None,
               batch_norm: bool = False,
               linear_sparse_combiner: str = "sum") -> None:
    self._feature_columns = validate_feature_columns(linear_feature_columns,
                                                     dnn_feature_columns)
    super().__init__(
        model_fn=_v2_model_fn(
            head, linear_feature_columns, linear_optimizer,
            dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
            dnn_activation_fn, dnn_dropout, batch_norm,
            linear_sparse_combiner, dnn_heads.SUM_OVER_BATCH_SIZE),
        model_dir=model_dir, config=config)


class DNNLinearCombinedClassifier(Estimator):
  """`tf.compat.v1.estimator.DNNLinearCombinedClassifier`: TF1 optimizers,
  partitioned variables, SUM loss reduction."""

  def __init__(self, model_dir: Optional[str] = None,
               linear_feature_columns: Optional[Sequence[Any]] = None,
               linear_optimizer: Any = "Ftrl",
               dnn_feature_columns: Optional[Sequence[Any]] = None,
               dnn_optimizer: Any = "Adagrad",
               dnn_hidden_units: Optional[Iterable[int]] = None,
               dnn_activation_fn: Callable = tf.nn.relu,
               dnn_dropout: Optional[float] = None, n_classes: int = 2,
               weight_column: Any = None,
               label_vocabulary: Optional[Sequence[str]] = None,
               input_layer_partitioner: Any = None, config: Any = None,
               warm_start_from: Any = None,
               loss_reduction: str = dnn_heads.V1_SUM,
               batch_norm: bool = False,
               linear_sparse_combiner: str = "sum") -> None:
    self._feature_columns = validate_feature_columns(linear_feature_columns,
                                                     dnn_feature_columns)
    head = dnn_heads.classifier_head_v1(n_classes, weight_column,
                                        label_vocabulary, loss_reduction)
    super().__init__(
        model_fn=_v1_model_fn(
            head, linear_feature_columns, linear_optimizer,
            dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
            dnn_activation_fn, dnn_dropout, input_layer_partitioner,
            batch_norm, linear_sparse_combiner),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedRegressor(Estimator):
  """`tf.compat.v1.estimator.DNNLinearCombinedRegressor`."""

  def __init__(self, model_dir: Optional[str] = None,
               linear_feature_columns: Optional[Sequence[Any]] = None,
               linear_optimizer: Any = "Ftrl",
               dnn_feature_columns: Optional[Sequence[Any]] = None,
               dnn_optimizer: Any = "Adagrad",
               dnn_hidden_units: Optional[Iterable[int]] = None,
               dnn_activation_fn: Callable = tf.nn.relu,
               dnn_dropout: Optional[float] = None, label_dimension: int = 1,
               weight_column: Any = None,
               input_layer_partitioner: Any = None, config: Any = None,
               warm_start_from: Any = None,
               loss_reduction: str = dnn_heads.V1_SUM,
               batch_norm: bool = False,
               linear_sparse_combiner: str = "sum") -> None:
    self._feature_columns = validate_feature_columns(linear_feature_columns,
                                                     dnn_feature_columns)
    head = dnn_heads.regression_head_v1(label_dimension, weight_column,
                                        loss_reduction)
    super().__init__(
        model_fn=_v1_model_fn(
            head, linear_feature_columns, linear_optimizer,
            dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
            dnn_activation_fn, dnn_dropout, input_layer_partitioner,
            batch_norm, linear_sparse_combiner),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedEstimator(Estimator):
  """`tf.compat.v1.estimator.DNNLinearCombinedEstimator`: a TF1 head; as in
  TensorFlow 2.15 it takes no `warm_start_from`."""

  def __init__(self, head: Any, model_dir: Optional[str] = None,
               linear_feature_columns: Optional[Sequence[Any]] = None,
               linear_optimizer: Any = "Ftrl",
               dnn_feature_columns: Optional[Sequence[Any]] = None,
               dnn_optimizer: Any = "Adagrad",
               dnn_hidden_units: Optional[Iterable[int]] = None,
               dnn_activation_fn: Callable = tf.nn.relu,
               dnn_dropout: Optional[float] = None,
               input_layer_partitioner: Any = None, config: Any = None,
               batch_norm: bool = False,
               linear_sparse_combiner: str = "sum") -> None:
    self._feature_columns = validate_feature_columns(linear_feature_columns,
                                                     dnn_feature_columns)
    super().__init__(
        model_fn=_v1_model_fn(
            head, linear_feature_columns, linear_optimizer,
            dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
            dnn_activation_fn, dnn_dropout, input_layer_partitioner,
            batch_norm, linear_sparse_combiner),
        model_dir=model_dir, config=config)
