"""The SDCA model: proximal stochastic dual coordinate ascent for linear models.

Behaviour of TensorFlow 2.15's `linear_optimizer/python/utils/sdca_ops.py`,
on TF 2.21's own kernels (`SdcaOptimizerV2`, `SdcaFprint`):

* `SparseFeatureColumn(example_indices, feature_indices, feature_values)`:
  one sparse feature of a batch as (example, feature id, value) triples.
* `SDCAModel(examples, variables, options)`: makes one unshrunk slot per
  weight variable (`<variable op name>_unshrunk`, zeros) and the example
  state table `ShardedMutableHashTable-<i>-of-<n>` keyed by the example id's
  fingerprint. `minimize()` runs one SDCA pass over the batch on the slots
  and the table; `update_weights(train_op)` copies the slots into the model
  weights, shrunk by `l1 / l2` when L1 is on. Losses: logistic, squared,
  hinge, smooth hinge, Poisson.

Checkpoints hold the same names as the Estimator's, so model_dirs move both
ways. These are TF1 graph ops (the table, scatter updates); training runs
on the graph engine.
"""

import collections
from typing import Any, Dict, List, Optional

import tensorflow as tf
from tensorflow.python.ops import variables as variables_lib

from estimator_compat.canned.sdca import sharded_table

LOSSES = ("logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss",
          "poisson_loss")
_WEIGHT_KINDS = ("sparse_features_weights", "dense_features_weights")
# Per example: dual variable, primal loss, dual loss, example weight.
_STATE_WIDTH = 4


class SparseFeatureColumn:
  """A sparse feature of a batch: int64 example and feature indices, and
  optional float32 values (1.0 each when None)."""

  def __init__(self, example_indices, feature_indices, feature_values):
    with tf.name_scope("SparseFeatureColumn"):
      self._example_indices = tf.convert_to_tensor(
          example_indices, dtype=tf.int64, name="example_indices")
      self._feature_indices = tf.convert_to_tensor(
          feature_indices, dtype=tf.int64, name="feature_indices")
    self._feature_values = None
    if feature_values is not None:
      with tf.name_scope("SparseFeatureColumn"):
        self._feature_values = tf.convert_to_tensor(
            feature_values, dtype=tf.float32, name="feature_values")

  @property
  def example_indices(self) -> tf.Tensor:
    return self._example_indices

  @property
  def feature_indices(self) -> tf.Tensor:
    return self._feature_indices

  @property
  def feature_values(self) -> Optional[tf.Tensor]:
    return self._feature_values


def _parts(variable) -> List[Any]:
  """A variable's partitions (itself when not partitioned)."""
  if isinstance(variable, (list, variables_lib.PartitionedVariable)):
    return list(variable)
  return [variable]


def _is_partitioned(variable) -> bool:
  return isinstance(variable, (list, variables_lib.PartitionedVariable))


def _as_tensor(value) -> tf.Tensor:
  """A tensor of `value`; a partitioned variable is concatenated."""
  if _is_partitioned(value):
    value = tf.concat(list(value), axis=0)
  return tf.convert_to_tensor(value)


def _zeros_slot(variable) -> tf.Variable:
  """A float32 zeros variable shaped as `variable`, named `<op>_unshrunk`."""
  initial = tf.compat.v1.cond(
      tf.compat.v1.is_variable_initialized(variable), variable.read_value,
      lambda: variable.initial_value)
  return tf.Variable(tf.compat.v1.zeros_like(initial, tf.float32),
                     name=variable.op.name + "_unshrunk")


class SDCAModel:
  """The SDCA solver of a linear model (see the module docstring).

  `examples`: `sparse_features` (list of SparseFeatureColumn),
  `dense_features` (list of float32 `[batch, d]`), `example_labels`,
  `example_weights` (float32 `[batch]`), `example_ids` (string `[batch]`).
  `variables`: `sparse_features_weights`, `dense_features_weights` (lists).
  `options`: `loss_type`, `symmetric_l1_regularization`,
  `symmetric_l2_regularization`, and optionally `num_loss_partitions`
  (1), `num_table_shards` (1), `adaptive` (True).
  """

  def __init__(self, examples: Dict[str, Any], variables: Dict[str, Any],
               options: Dict[str, Any]):
    if not examples or not variables or not options:
      raise ValueError(
          "examples, variables and options must all be specified.")
    if options["loss_type"] not in LOSSES:
      raise ValueError("Unsupported loss_type: ", options["loss_type"])
    self._require(("example_labels", "example_weights", "example_ids",
                   "sparse_features", "dense_features"), examples)
    self._require_lists(("sparse_features", "dense_features"), examples)
    self._require(_WEIGHT_KINDS, variables)
    self._require_lists(_WEIGHT_KINDS, variables)
    self._require(("loss_type", "symmetric_l2_regularization",
                   "symmetric_l1_regularization"), options)
    l2 = options["symmetric_l2_regularization"]
    if l2 <= 0.0:
      raise ValueError("symmetric_l2_regularization should be positive.")
    if l2 <= 1.0:
      tf.compat.v1.logging.warn(
          "symmetric_l2_regularization for SDCA should typically be larger "
          "than for online optimization methods. Recommended value is of the "
          "order of the average L2 norm of the training examples.")
    if options["symmetric_l1_regularization"] < 0.0:
      raise ValueError("symmetric_l1_regularization should be non-negative.")
    self._examples = examples
    self._variables = variables
    self._options = options
    self._make_slots()
    self._hashtable = sharded_table.ShardedMutableDenseHashTable(
        key_dtype=tf.int64, value_dtype=tf.float32,
        num_shards=self._num_table_shards(),
        default_value=[0.0] * _STATE_WIDTH, empty_key=[0, 0],
        deleted_key=[1, 1])
    tf.compat.v1.summary.scalar("approximate_duality_gap",
                                self.approximate_duality_gap())
    tf.compat.v1.summary.scalar("examples_seen", self._hashtable.size())

  # Options.
  def _l1(self) -> float:
    return self._options["symmetric_l1_regularization"]

  def _l2(self) -> float:
    return self._options["symmetric_l2_regularization"]

  def _num_loss_partitions(self) -> int:
    return self._options.get("num_loss_partitions", 1)

  def _adaptive(self) -> bool:
    return self._options.get("adaptive", True)

  def _num_table_shards(self) -> int:
    shards = self._options.get("num_table_shards")
    return 1 if shards is None else shards

  @staticmethod
  def _require(keys, mapping) -> None:
    for key in keys:
      if mapping[key] is None:
        raise ValueError(f"{key} must be specified.")

  @staticmethod
  def _require_lists(keys, mapping) -> None:
    for key in keys:
      if not isinstance(mapping[key], list):
        raise ValueError(key + " must be a list.")

  def _make_slots(self) -> None:
    """One zeros `<name>_unshrunk` slot per weight (per partition)."""
    self._slots = collections.defaultdict(list)
    for kind in _WEIGHT_KINDS:
      for variable in self._variables[kind]:
        if _is_partitioned(variable):
          parts = []
          for part in variable:
            with tf.compat.v1.colocate_with(part):
              parts.append(_zeros_slot(part))
          self._slots["unshrunk_" + kind].append(parts)
        else:
          with tf.compat.v1.device(variable.device):
            self._slots["unshrunk_" + kind].append(_zeros_slot(variable))

  def _all_weight_tensors(self) -> List[tf.Tensor]:
    return [tf.convert_to_tensor(part)
            for kind in _WEIGHT_KINDS for variable in self._variables[kind]
            for part in _parts(variable)]

  def _l1_loss(self) -> tf.Tensor:
    """`l1 * sum |w|` over all weights (float64, not normalized)."""
    with tf.name_scope("sdca/l1_loss"):
      sums = []
      for weights in self._all_weight_tensors():
        with tf.compat.v1.device(weights.device):
          sums.append(tf.math.reduce_sum(
              tf.math.abs(tf.cast(weights, tf.float64))))
      return self._l1() * tf.math.add_n(sums)

  def _l2_loss(self) -> tf.Tensor:
    """`l2 * sum w^2 / 2` over all weights (float64, not normalized)."""
    with tf.name_scope("sdca/l2_loss"):
      sums = []
      for weights in self._all_weight_tensors():
        with tf.compat.v1.device(weights.device):
          sums.append(tf.math.reduce_sum(
              tf.math.square(tf.cast(weights, tf.float64))))
      return self._l2() * tf.math.add_n(sums) / 2.0

  def _linear_predictions(self, examples) -> tf.Tensor:
    """`w . x` per example."""
    with tf.name_scope("sdca/prediction"):
      batch_size = tf.compat.v1.shape(examples["example_ids"])[0]
      predictions = tf.zeros([batch_size])
      sparse_weights = [_as_tensor(w)
                        for w in self._variables["sparse_features_weights"]]
      for column, weights in zip(examples["sparse_features"], sparse_weights):
        dot = tf.math.segment_sum(
            tf.math.multiply(
                tf.compat.v1.gather(weights, column.feature_indices),
                column.feature_values), column.example_indices)
        predictions += tf.compat.v1.pad(
            dot, [[0, batch_size - tf.compat.v1.shape(dot)[0]]])
      dense_features = [_as_tensor(x) for x in examples["dense_features"]]
      dense_weights = [_as_tensor(w)
                       for w in self._variables["dense_features_weights"]]
      for features, weights in zip(dense_features, dense_weights):
        predictions += tf.compat.v1.squeeze(
            tf.linalg.matmul(features, tf.compat.v1.expand_dims(weights, -1)))
    return predictions

  def predictions(self, examples) -> tf.Tensor:
    """Probabilities (logistic), exp (Poisson), else raw `w . x`."""
    self._require(("example_weights", "sparse_features", "dense_features"),
                  examples)
    self._require_lists(("sparse_features", "dense_features"), examples)
    result = self._linear_predictions(examples)
    if self._options["loss_type"] == "logistic_loss":
      with tf.name_scope("sdca/logistic_prediction"):
        result = tf.math.sigmoid(result)
    elif self._options["loss_type"] == "poisson_loss":
      with tf.name_scope("sdca/poisson_prediction"):
        result = tf.math.exp(result)
    return result

  @staticmethod
  def _partition_ids(parts, ids):
    """Which partition holds each id (`min_max`/`fixed_size` layout: the
    first `total % n` parts hold one row more) and its row there."""
    count = len(parts)
    total = sum(tf.compat.dimension_value(p.shape[0]) or 0 for p in parts)
    if all(tf.compat.dimension_value(p.shape[0]) for p in parts):
      total_ids = tf.constant(total, ids.dtype)
    else:
      sizes = []
      for part in parts:
        static = tf.compat.dimension_value(part.shape[0])
        if static is not None:
          sizes.append(static)
        else:
          with tf.compat.v1.colocate_with(part):
            sizes.append(tf.compat.v1.shape(part)[0])
      total_ids = tf.math.reduce_sum(tf.cast(tf.stack(sizes), ids.dtype))
    per_part = total_ids // count
    extras = total_ids % count
    assignments = tf.math.maximum(ids // (per_part + 1),
                                  (ids - extras) // per_part)
    rows = tf.where(assignments < extras, ids % (per_part + 1),
                    (ids - extras) % per_part)
    return tf.cast(assignments, tf.int32), rows

  def minimize(self, global_step=None, name=None) -> tf.Operation:
    """One SDCA step over the batch: updates the slots and the state table,
    then increments `global_step` (when given)."""
    with tf.compat.v1.name_scope(name, "sdca/minimize"):
      example_indices, feature_indices, feature_values = [], [], []
      for column in self._examples["sparse_features"]:
        example_indices.append(column.example_indices)
        feature_indices.append(column.feature_indices)
        if column.feature_values is not None:
          feature_values.append(column.feature_values)
      hashed_ids = tf.raw_ops.SdcaFprint(
          input=tf.convert_to_tensor(self._examples["example_ids"]))
      state = self._hashtable.lookup(hashed_ids)

      unique_ids, gathered, layouts = [], [], []
      for slot, ids in zip(self._slots["unshrunk_sparse_features_weights"],
                           feature_indices):
        unique = tf.cast(tf.unique(tf.cast(ids, tf.int32))[0], tf.int64)
        unique_ids.append(unique)
        if _is_partitioned(slot):
          flat = tf.reshape(unique, [-1])
          assignments, rows = self._partition_ids(slot, flat)
          rows_by_part = tf.dynamic_partition(rows, assignments, len(slot))
          layouts.append((assignments, rows_by_part))
          pieces = []
          for part, part_rows in zip(slot, rows_by_part):
            with tf.compat.v1.colocate_with(part):
              pieces.append(tf.compat.v1.gather(part, part_rows))
          positions = tf.dynamic_partition(
              tf.range(tf.compat.v1.shape(rows)[0]), assignments, len(slot))
          gathered.append(tf.dynamic_stitch(positions, pieces))
        else:
          layouts.append(None)
          slot_tensor = tf.convert_to_tensor(slot)
          with tf.compat.v1.device(slot_tensor.device):
            gathered.append(tf.compat.v1.gather(slot_tensor, unique))

      new_state, sparse_deltas, dense_deltas = tf.raw_ops.SdcaOptimizerV2(
          sparse_example_indices=example_indices,
          sparse_feature_indices=feature_indices,
          sparse_feature_values=feature_values,
          dense_features=[_as_tensor(x)
                          for x in self._examples["dense_features"]],
          example_weights=tf.convert_to_tensor(
              self._examples["example_weights"]),
          example_labels=tf.convert_to_tensor(
              self._examples["example_labels"]),
          sparse_indices=unique_ids, sparse_weights=gathered,
          dense_weights=[_as_tensor(w) for w in
                         self._slots["unshrunk_dense_features_weights"]],
          example_state_data=state,
          loss_type=self._options["loss_type"], l1=self._l1(), l2=self._l2(),
          num_loss_partitions=self._num_loss_partitions(),
          num_inner_iterations=1, adaptive=self._adaptive())

      with tf.control_dependencies([new_state]):
        updates = [self._hashtable.insert(hashed_ids, new_state)]
        for slot, ids, delta, layout in zip(
            self._slots["unshrunk_sparse_features_weights"], unique_ids,
            sparse_deltas, layouts):
          if layout is None:
            updates.append(tf.compat.v1.scatter_add(slot, ids, delta))
            continue
          assignments, rows_by_part = layout
          deltas = tf.dynamic_partition(delta, assignments, len(slot))
          for part, part_rows, part_delta in zip(slot, rows_by_part, deltas):
            with tf.compat.v1.colocate_with(part):
              updates.append(
                  tf.compat.v1.scatter_add(part, part_rows, part_delta))
        for slot, delta in zip(self._slots["unshrunk_dense_features_weights"],
                               dense_deltas):
          if _is_partitioned(slot):
            pieces = tf.split(delta, num_or_size_splits=[
                part.shape.as_list()[0] for part in slot])
            for part, piece in zip(slot, pieces):
              updates.append(tf.compat.v1.assign_add(part, piece))
          else:
            updates.append(tf.compat.v1.assign_add(slot, delta))
      if global_step is None:
        return tf.group(*updates)
      with tf.control_dependencies(updates):
        return tf.compat.v1.assign_add(global_step, 1, name=name).op

  def update_weights(self, train_op) -> tf.Operation:
    """Copies the slots into the weights after `train_op`; with L1 on,
    then shrinks each weight towards 0 by `l1 / l2`."""
    with tf.control_dependencies([train_op]):
      updates = []
      for kind in _WEIGHT_KINDS:
        for variable, slot in zip(self._variables[kind],
                                  self._slots["unshrunk_" + kind]):
          for part, slot_part in zip(_parts(variable), _parts(slot)):
            updates.append(part.assign(slot_part))
    if self._l1() <= 0:
      return tf.group(*updates)
    shrinkage = self._l1() / self._l2()
    with tf.control_dependencies(updates):
      shrunk = []
      for kind in _WEIGHT_KINDS:
        for variable in self._variables[kind]:
          for part in _parts(variable):
            with tf.compat.v1.device(part.device):
              shrunk.append(part.assign(
                  tf.math.sign(part) *
                  tf.math.maximum(0.0, tf.math.abs(part) - shrinkage)))
      return tf.group(*shrunk)

  def approximate_duality_gap(self) -> tf.Tensor:
    """(primal + dual + l1 + 2 * l2 loss) / total example weight seen."""
    with tf.name_scope("sdca/approximate_duality_gap"):
      _, shard_values = self._hashtable.export_sharded()
      sums = []
      for values in shard_values:
        with tf.compat.v1.device(values.device):
          with tf.control_dependencies(sums):
            sums.append(tf.math.reduce_sum(tf.cast(values, tf.float64), 0))
      total = tf.math.add_n(sums)
      return (total[1] + total[2] + self._l1_loss() +
              2.0 * self._l2_loss()) / total[3]

  def unregularized_loss(self, examples) -> tf.Tensor:
    """The weighted mean loss of `examples`, without regularization."""
    self._require(("example_labels", "example_weights", "sparse_features",
                   "dense_features"), examples)
    self._require_lists(("sparse_features", "dense_features"), examples)
    with tf.name_scope("sdca/unregularized_loss"):
      predictions = tf.cast(self._linear_predictions(examples), tf.float64)
      labels = tf.cast(tf.convert_to_tensor(examples["example_labels"]),
                       tf.float64)
      weights = tf.cast(tf.convert_to_tensor(examples["example_weights"]),
                        tf.float64)
      loss_type = self._options["loss_type"]
      if loss_type == "logistic_loss":
        losses = tf.nn.sigmoid_cross_entropy_with_logits(
            labels=labels, logits=predictions)
      elif loss_type == "poisson_loss":
        losses = tf.nn.log_poisson_loss(targets=labels,
                                        log_input=predictions)
      elif loss_type in ("hinge_loss", "smooth_hinge_loss"):
        ones = tf.compat.v1.ones_like(predictions)
        signs = tf.math.subtract(2 * labels, ones)
        losses = tf.nn.relu(tf.math.subtract(
            ones, tf.math.multiply(signs, predictions)))
      else:
        squared = tf.math.square(tf.math.subtract(labels, predictions))
        return (tf.math.reduce_sum(tf.math.multiply(squared, weights)) /
                (2.0 * tf.math.reduce_sum(weights)))
      return (tf.math.reduce_sum(tf.math.multiply(losses, weights)) /
              tf.math.reduce_sum(weights))

  def regularized_loss(self, examples) -> tf.Tensor:
    """`unregularized_loss` plus (l1 + l2 loss) / total example weight."""
    self._require(("example_labels", "example_weights", "sparse_features",
                   "dense_features"), examples)
    self._require_lists(("sparse_features", "dense_features"), examples)
    with tf.name_scope("sdca/regularized_loss"):
      weights = tf.convert_to_tensor(examples["example_weights"])
      return ((self._l1_loss() + self._l2_loss()) /
              tf.math.reduce_sum(tf.cast(weights, tf.float64)) +
              self.unregularized_loss(examples))
