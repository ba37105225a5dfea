"""`tf.estimator.experimental.LinearSDCA` and the SDCA linear model_fn.

A `LinearSDCA` given as the `optimizer` of LinearClassifier (binary,
logistic loss) or LinearRegressor (one-dimensional, squared loss), v2 or
v1, trains the linear model with SDCA instead of a gradient optimizer, as
in TensorFlow 2.15: v2 feature columns only, `sparse_combiner="sum"`, the
model `linear/linear_model/...` (partitioned under the v1 estimators'
partitioner), each weight with its `..._unshrunk` slot and the example
state table `ShardedMutableHashTable-<i>-of-<n>` in the checkpoint. A chief
hook copies (and with L1, shrinks) the slots into the weights after each
step. Training needs a TF1 Session graph (a hash table and in-place
updates): the function engine hands it to the graph engine; evaluation and
prediction are the plain linear model.
"""

from typing import Any, Optional

import tensorflow as tf
from tensorflow.python.feature_column import feature_column_lib
from tensorflow.python.feature_column import feature_column_v2 as fc_v2

from estimator_compat.canned import linear_logits
from estimator_compat.canned.sdca import sdca_model
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine
from estimator_compat.head import binary_class_head
from estimator_compat.head import regression_head
from estimator_compat.head import tf1_heads
from estimator_compat.mode_keys import ModeKeys


class LinearSDCA:
  """Stochastic Dual Coordinate Ascent for LinearClassifier/LinearRegressor.

  Pass it as their `optimizer`. Each batch's features must hold
  `example_id_column`, a string `Tensor` of shape `[batch_size]` naming
  each example (SDCA keeps per-example state). Needs v2 feature columns,
  `sparse_combiner="sum"`, a binary label (classifier) or a
  one-dimensional label (regressor).

  Args:
    example_id_column: name of the feature holding the example ids.
    num_loss_partitions: number of concurrent trainers (workers) of the loss.
    num_table_shards: shards of the example state table (1 when None).
    symmetric_l1_regularization: L1 strength, >= 0.
    symmetric_l2_regularization: L2 strength, > 0 (typically above 1).
    adaptive: whether to sample examples adaptively.
  """

  def __init__(self, example_id_column: str, num_loss_partitions: int = 1,
               num_table_shards: Optional[int] = None,
               symmetric_l1_regularization: float = 0.0,
               symmetric_l2_regularization: float = 1.0,
               adaptive: bool = False):
    self._example_id_column = example_id_column
    self._num_loss_partitions = num_loss_partitions
    self._num_table_shards = num_table_shards
    self._symmetric_l1_regularization = symmetric_l1_regularization
    self._symmetric_l2_regularization = symmetric_l2_regularization
    self._adaptive = adaptive

  def _prune_and_unique_sparse_ids(self, id_weight_pair):
    """The column's (example, id, weight) triples without negative ids
    (out-of-vocabulary lookups), one triple per distinct (example, id), the
    weights of repeats summed."""
    ids = id_weight_pair.id_tensor
    if id_weight_pair.weight_tensor is not None:
      weights = id_weight_pair.weight_tensor.values
    else:
      weights = tf.ones([tf.compat.v1.shape(ids.indices)[0]], tf.float32)
    examples = tf.reshape(ids.indices[:, 0], [-1])
    flat_ids = tf.cast(tf.reshape(ids.values, [-1]), tf.int64)
    valid = tf.math.greater_equal(flat_ids, 0)
    flat_ids = tf.compat.v1.boolean_mask(flat_ids, valid)
    examples = tf.compat.v1.boolean_mask(examples, valid)
    weights = tf.compat.v1.boolean_mask(weights, valid)
    # One key per (example, id): example * (max id + 1) + id.
    stride = tf.math.reduce_max(flat_ids) + 1
    keys, key_index = tf.unique(stride * examples + flat_ids)
    distinct = tf.compat.v1.shape(keys)[0]
    key_examples = tf.math.unsorted_segment_min(examples, key_index, distinct)
    key_ids = keys - stride * key_examples
    key_weights = tf.reshape(
        tf.math.unsorted_segment_sum(weights, key_index, distinct), [-1])
    return sdca_model.SparseFeatureColumn(key_examples, key_ids, key_weights)

  def get_train_step(self, state_manager, weight_column_name, loss_type,
                     feature_columns, features, targets, bias_var,
                     global_step):
    """The SDCA model over the columns' weights and its train op.

    Raises:
      ValueError: a dense column of rank above 1, or a column that is
        neither categorical nor dense.
    """
    batch_size = tf.compat.v1.shape(targets)[0]
    cache = fc_v2.FeatureTransformationCache(features)
    dense_features, dense_weights = [], []
    sparse_features, sparse_weights = [], []
    for column in sorted(feature_columns, key=lambda c: c.name):
      if isinstance(column, fc_v2.CategoricalColumn):
        sparse_features.append(self._prune_and_unique_sparse_ids(
            column.get_sparse_tensors(cache, state_manager)))
        sparse_weights.append(state_manager.get_variable(column, "weights"))
      elif isinstance(column, fc_v2.DenseColumn):
        if column.variable_shape.ndims != 1:
          raise ValueError(
              f"Column {type(column).__name__} has rank "
              f"{column.variable_shape.ndims}, larger than 1.")
        dense_features.append(column.get_dense_tensor(cache, state_manager))
        dense_weights.append(state_manager.get_variable(column, "weights"))
      else:
        raise ValueError(
            f"LinearSDCA does not support column type "
            f"{type(column).__name__}.")
    dense_features.append(tf.ones([batch_size, 1]))
    dense_weights.append(bias_var)
    if weight_column_name:
      example_weights = tf.reshape(features[weight_column_name], shape=[-1])
    else:
      example_weights = tf.ones([batch_size])
    model = sdca_model.SDCAModel(
        examples=dict(
            sparse_features=sparse_features, dense_features=dense_features,
            example_labels=tf.cast(tf.reshape(targets, shape=[-1]),
                                   tf.float32),
            example_weights=example_weights,
            example_ids=features[self._example_id_column]),
        variables=dict(sparse_features_weights=sparse_weights,
                       dense_features_weights=dense_weights),
        options=dict(
            symmetric_l1_regularization=self._symmetric_l1_regularization,
            symmetric_l2_regularization=self._symmetric_l2_regularization,
            adaptive=self._adaptive,
            num_loss_partitions=self._num_loss_partitions,
            num_table_shards=self._num_table_shards,
            loss_type=loss_type))
    return model, model.minimize(global_step=global_step)


class _SDCAUpdateWeightsHook(tf.compat.v1.train.SessionRunHook):
  """Runs the SDCA weight update (slots into weights) with each step."""

  def __init__(self, model: sdca_model.SDCAModel, train_op):
    self._sdca_model = model
    self._train_op = train_op
    self._update_op = None

  def begin(self):
    self._update_op = self._sdca_model.update_weights(self._train_op)

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(self._update_op)


def is_sdca(optimizer: Any) -> bool:
  return isinstance(optimizer, LinearSDCA)


def _check_common(feature_columns, sparse_combiner: str) -> None:
  if sparse_combiner != "sum":
    raise ValueError('sparse_combiner must be "sum" when optimizer is a '
                     "LinearSDCA object.")
  if not feature_column_lib.is_feature_column_v2(feature_columns):
    raise ValueError("V2 feature columns required when optimizer is a "
                     "LinearSDCA object.")


def check_classifier(feature_columns, n_classes: int, optimizer,
                     sparse_combiner: str) -> None:
  """The LinearClassifier constructor's checks of a LinearSDCA optimizer.

  Raises:
    ValueError: sparse_combiner not "sum", v1 feature columns, or more than
      two classes.
  """
  if not is_sdca(optimizer):
    return
  _check_common(feature_columns, sparse_combiner)
  if n_classes > 2:
    raise ValueError("LinearSDCA cannot be used in a multi-class setting.")


def check_regressor(feature_columns, label_dimension: int, optimizer,
                    sparse_combiner: str) -> None:
  """The LinearRegressor constructor's checks of a LinearSDCA optimizer.

  Raises:
    ValueError: sparse_combiner not "sum", v1 feature columns, or a label
      of more than one dimension.
  """
  if not is_sdca(optimizer):
    return
  _check_common(feature_columns, sparse_combiner)
  if label_dimension > 1:
    raise ValueError("LinearSDCA can only be used with one-dimensional "
                     "label.")


def _loss_type(head) -> str:
  if isinstance(head, binary_class_head.BinaryClassHead):
    return "logistic_loss"
  if isinstance(head, regression_head.RegressionHead):
    if head.logits_dimension != 1:
      raise ValueError("LinearSDCA can only be used with one-dimensional "
                       "label.")
    return "squared_loss"
  raise ValueError(f"Unsupported head type: {head}")


def sdca_model_fn(features, labels, mode, head, feature_columns,
                  optimizer: LinearSDCA):
  """The EstimatorSpec of a linear model trained by `optimizer` (SDCA).

  The v1 estimators call it inside `variable_scope("linear")`.

  Raises:
    ValueError: v1 feature columns, or a head other than binary
      classification or one-dimensional regression.
    NeedsGraphEngine: training traced into a function graph.
  """
  if not feature_column_lib.is_feature_column_v2(feature_columns):
    raise ValueError("V2 feature columns required when optimizer is a "
                     "LinearSDCA object.")
  loss_type = _loss_type(head)
  if mode == ModeKeys.TRAIN and tf.inside_function():
    raise NeedsGraphEngine(
        "LinearSDCA trains with TF1 graph state: a per-example hash table "
        "(ShardedMutableHashTable) and in-place updates of the unshrunk "
        "weights, run by a hook in the same Session step, which needs a TF1 "
        f"Session graph. {GRAPH_ENGINE_FIX}")
  # The v1 estimators' TF1 heads build inside variable_scope("linear").
  is_tf1_head = isinstance(head, tf1_heads._TF1Head)  # pylint: disable=protected-access
  model = linear_logits.LinearModel(
      feature_columns=feature_columns, units=1, sparse_combiner="sum",
      name="linear_model" if is_tf1_head else "linear/linear_model")
  logits = model(features)
  bias = linear_logits.expand_partitions([model.bias])
  weights = [v for v in linear_logits.expand_partitions(model.variables)
             if all(v is not b for b in bias)]
  tf.compat.v1.summary.scalar("bias", bias[0][0])
  tf.compat.v1.summary.scalar("fraction_of_zero_weights",
                              linear_logits.fraction_of_zero(weights))
  if mode != ModeKeys.TRAIN:
    return head.create_estimator_spec(features=features, mode=mode,
                                      labels=labels, logits=logits)
  model_state, train_op = optimizer.get_train_step(
      model.layer._state_manager,  # pylint: disable=protected-access
      head._weight_column,  # pylint: disable=protected-access
      loss_type, feature_columns, features, labels, model.bias,
      tf.compat.v1.train.get_global_step())
  spec = head.create_estimator_spec(
      features=features, mode=mode, labels=labels,
      train_op_fn=lambda unused_loss: train_op, logits=logits)
  return spec._replace(training_chief_hooks=(
      tuple(spec.training_chief_hooks) +
      (_SDCAUpdateWeightsHook(model_state, train_op),)))
