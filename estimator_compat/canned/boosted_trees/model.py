"""The BoostedTrees model_fn: the ensemble, and the per-step training graph
(TF 2.8's canned BoostedTrees estimators).

Training runs in phases, each step one batch: (raw numeric columns) the
quantile sketch for `n_batches_per_layer` batches, which leaves the global
step alone, until the chief sets the bucket boundaries; (`center_bias`)
the bias of the first tree; then one layer per `n_batches_per_layer`
batches until `n_trees` trees of `max_depth` layers are finalized, when a
hook stops training. With `train_in_memory` every phase step takes the
whole data set at once (in_memory.py). The ensemble is saved as
`boosted_trees:0_stamp` / `boosted_trees:0_serialized` and the boundaries
as `boosted_trees/QuantileAccumulator:0_bucket_boundaries_<i>`, so
model_dirs of TF 2.8's estimators load here and back. TF 2.21 has no
BoostedTrees kernels: graph_kernels runs kernels.py's and quantiles.py's
instead. It is a TF1 Session program (a hook stamps accumulators in the
session it is given; the kernels are `py_func`s), so every mode runs on
the graph engine.
"""

import functools

import tensorflow as tf

from estimator_compat import mode_keys
from estimator_compat.canned.boosted_trees import features as features_lib
from estimator_compat.canned.boosted_trees import explanations
from estimator_compat.canned.boosted_trees import graph_kernels
from estimator_compat.canned.boosted_trees import growers
from estimator_compat.canned.boosted_trees import in_memory
from estimator_compat.canned.boosted_trees import inference
from estimator_compat.errors import (GRAPH_ENGINE_FIX, GUARD_EXEMPT_COLLECTION,
                                     NeedsGraphEngine)

ModeKeys = mode_keys.ModeKeys
_NO_NODE = -1
_QUANTILE_ACCUMULATOR_NAME = "QuantileAccumulator"


class StopAtAttemptsHook(tf.compat.v1.train.SessionRunHook):
  """Stops training once `max_trees` trees are finalized or twice the layers
  of `max_trees` full trees were attempted."""

  def __init__(self, num_finalized_trees, num_attempted_layers,
               max_trees: int, max_depth: int):
    self._tensors = [num_finalized_trees, num_attempted_layers]
    self._max_trees = max_trees
    self._max_depth = max_depth

  def before_run(self, run_context):
    del run_context
    return tf.compat.v1.train.SessionRunArgs(self._tensors)

  def after_run(self, run_context, run_values):
    finalized, attempted = run_values.results
    limit = 2 * self._max_trees * self._max_depth
    # The fetched values precede this step's growth: near the limits, read
    # them again after it.
    if finalized >= self._max_trees - 1 or attempted > limit - 1:
      finalized, attempted = run_context.session.run(self._tensors)
    if finalized >= self._max_trees or attempted > limit:
      run_context.request_stop()


class GrowerInitializationHook(tf.compat.v1.train.SessionRunHook):
  """Runs the grower's initialization once the chief's session exists."""

  def __init__(self, init_op):
    self._init_op = init_op

  def after_create_session(self, session, coord):
    del coord
    session.run(self._init_op)


def _local_variable(initial_value, name: str):
  return tf.compat.v1.Variable(initial_value=initial_value, trainable=False,
                               validate_shape=False, name=name,
                               use_resource=True)


def _gradients_and_hessians(loss, logits, labels, logits_dimension,
                            closed_form):
  if logits_dimension == 1 and closed_form:
    return closed_form(logits, labels)
  gradients = tf.compat.v1.gradients(loss, logits, name="Gradients")[0]
  if logits_dimension == 1:
    hessians = tf.compat.v1.gradients(gradients, logits, name="Hessians")[0]
    return gradients, hessians
  return gradients, _full_hessians(gradients, logits, logits_dimension)


def _full_hessians(gradients, logits, logits_dimension: int):
  """Each example's K x K hessian, flat `[batch, K * K]`: row i is the
  derivative of gradient i by the logits (2.8's full-hessian strategy)."""
  rows = []
  for row, gradient in enumerate(tf.unstack(gradients, num=logits_dimension,
                                            axis=1)):
    rows.append(tf.compat.v1.gradients(
        gradient, logits, name=f"Hessian_{row}",
        colocate_gradients_with_ops=False, gate_gradients=0,
        aggregation_method=None)[0])
  return tf.reshape(tf.stack(rows, axis=1), (-1, logits_dimension ** 2))


def _example_weights(features, weight_column):
  """The quantile sketch's example weights: the weight column's values, or
  one weight of 1 for every example."""
  if weight_column is None:
    return tf.constant(1., shape=[1])
  if isinstance(weight_column, str):
    weight_column = tf.feature_column.numeric_column(key=weight_column,
                                                     shape=(1,))
  return tf.squeeze(features_lib.transform(features, [weight_column])[0],
                    axis=1)


def _restored_model(features, columns, scope: str):
  """The checkpoint's serialized ensemble and the bucketized features: the
  trained ensemble and boundaries are only read, no kernel is needed."""
  float_columns = [c for c in columns if features_lib.is_float_column(c)]
  serialized = inference.restored_ensemble(scope)
  boundaries = {}
  if float_columns:
    boundaries = features_lib.float_boundaries(
        float_columns, inference.restored_boundaries(
            scope, _QUANTILE_ACCUMULATOR_NAME,
            features_lib.num_features(float_columns)))
  return serialized, features_lib.transform(features, columns, boundaries)


def explanations_model_fn(features, head, feature_columns,
                          name: str = "boosted_trees"):
  """Predictions plus each example's serialized path (explanations.DEBUG_KEY).

  Raises:
    NeedsGraphEngine: traced into a function graph.
  """
  if tf.inside_function():
    raise NeedsGraphEngine(
        "BoostedTrees explanations walk the trees in a py_func. "
        f"{GRAPH_ENGINE_FIX}")
  columns = features_lib.sorted_columns(feature_columns)
  with tf.compat.v1.name_scope(name) as scope:
    tf.compat.v1.train.get_or_create_global_step()
    serialized, input_features = _restored_model(features, columns, scope)
    logits = inference.predict(serialized, input_features,
                               head.logits_dimension)
    spec = head.create_estimator_spec(features=features,
                                      mode=ModeKeys.PREDICT, labels=None,
                                      train_op_fn=tf.no_op, logits=logits)
    spec.predictions[explanations.DEBUG_KEY] = explanations.debug_outputs(
        serialized, input_features)
  return spec


def bt_model_fn(features, labels, mode, head, feature_columns,
                hparams: growers.TreeHParams, n_batches_per_layer, config,
                closed_form_grad_and_hess_fn=None, weight_column=None,
                train_in_memory: bool = False, name: str = "boosted_trees"):
  """The model_fn of the BoostedTrees estimators.

  Raises:
    NeedsGraphEngine: traced into a function graph.
    AssertionError: train_in_memory with n_batches_per_layer other than 1.
    ValueError: train_in_memory in distributed training.
  """
  if tf.inside_function():
    raise NeedsGraphEngine(
        "BoostedTrees estimators are TF1 Session programs: their ensemble "
        "grows through accumulators and a hook that runs ops in the session "
        f"it is given. {GRAPH_ENGINE_FIX}")
  logits_dimension = head.logits_dimension
  columns = features_lib.sorted_columns(feature_columns)
  float_columns = [c for c in columns if features_lib.is_float_column(c)]
  with tf.compat.v1.name_scope(name) as scope:
    global_step = tf.compat.v1.train.get_or_create_global_step()
    num_quantiles = int(1. / hparams.quantile_sketch_epsilon)
    bucket_sizes, feature_ids, split_types = features_lib.bucket_groups(
        columns, num_quantiles)
    if mode != ModeKeys.TRAIN:
      serialized, input_features = _restored_model(features, columns,
                                                   scope)
      logits = inference.predict(serialized, input_features,
                                 logits_dimension)
      return head.create_estimator_spec(features=features, mode=mode,
                                        labels=labels, train_op_fn=tf.no_op,
                                        logits=logits)
    quantile_accumulator, boundaries = None, {}
    if float_columns:
      quantile_accumulator = graph_kernels.QuantileAccumulator(
          scope, _QUANTILE_ACCUMULATOR_NAME, hparams.quantile_sketch_epsilon,
          features_lib.num_features(float_columns), num_quantiles)
      boundaries = features_lib.float_boundaries(
          float_columns, quantile_accumulator.bucket_boundaries())
    if logits_dimension > 1 and hparams.center_bias:
      k = logits_dimension
      raise ValueError(
          f"Dimension 1 in both shapes must be equal, but are {k} and "
          f"{k * k}. Shapes are [?,{k}] and [?,{k * k}]. (TF 2.8's bias "
          "centering stacks the gradients with the hessians, so "
          f"center_bias fails with logits_dimension={k}.) Fix: pass "
          "center_bias=False.")
    ensemble = graph_kernels.EnsembleState(scope, logits_dimension)
    input_features = features_lib.transform(features, columns, boundaries)
    # Without float columns the boundaries are ready from the start (2.8
    # saved the flag all the same).
    are_boundaries_ready = _local_variable(not float_columns,
                                           "are_boundaries_ready")
    batch_size = tf.compat.v1.shape(labels)[0]
    (stamp_token, num_trees, num_finalized_trees, num_attempted_layers,
     last_layer_nodes_range) = ensemble.get_states()
    if train_in_memory:
      in_memory.check(n_batches_per_layer, config)
      cache_features = in_memory.feature_cache_op(
          input_features, batch_size, are_boundaries_ready, growers.cond)
      state_cache = in_memory.TrainingStateCache(batch_size,
                                                 logits_dimension)
      cached_tree_ids, cached_node_ids, cached_logits = state_cache.lookup()
      partial_logits, tree_ids, node_ids = ensemble.training_predict(
          input_features, cached_tree_ids, cached_node_ids)
      logits = cached_logits + partial_logits
      grower = growers.InMemoryGrower(ensemble, hparams, feature_ids,
                                      logits_dimension)
    else:
      partial_logits, _, node_ids = ensemble.training_predict(input_features)
      logits = tf.zeros([batch_size, logits_dimension]) + partial_logits
      grower = growers.AccumulatorGrower(
          ensemble, hparams, stamp_token, n_batches_per_layer,
          bucket_sizes, feature_ids, config.is_chief, logits_dimension)
    tf.compat.v1.summary.scalar("ensemble/num_trees", num_trees)
    tf.compat.v1.summary.scalar("ensemble/num_finalized_trees",
                                num_finalized_trees)
    tf.compat.v1.summary.scalar("ensemble/num_attempted_layers",
                                num_attempted_layers)
    center_bias_var = _local_variable(hparams.center_bias,
                                      "center_bias_needed")
    weights = _example_weights(features, weight_column)

    def train_op_fn(loss):
      """One training step: bias centering first, then layers."""

      def grow():
        gradients, hessians = _gradients_and_hessians(
            loss, logits, labels, logits_dimension,
            closed_form_grad_and_hess_fn)
        summaries = [
            [graph_kernels.aggregate_stats(
                node_ids, gradients, hessians, input_features[feature_id],
                growers.max_splits(hparams), size, logits_dimension)
             for feature_id in ids]
            for size, ids in zip(bucket_sizes, feature_ids)]
        grow_layer = functools.partial(grower.grow_tree, summaries,
                                       last_layer_nodes_range, split_types)
        if hparams.center_bias:
          update = growers.cond(
              center_bias_var,
              functools.partial(grower.center_bias, center_bias_var,
                                gradients, hessians),
              grow_layer)
        else:
          update = grow_layer()
        ops = [update]
        if train_in_memory:
          # The states are cached once bias centering is over.
          ops.append(growers.cond(
              center_bias_var, tf.no_op, lambda: state_cache.insert(
                  tree_ids, node_ids, logits)))
        with tf.control_dependencies([update]):
          step = tf.compat.v1.assign_add(global_step, 1).op
        return tf.group(ops + [step], name="grow_op")

      def update_quantiles():
        with tf.compat.v1.name_scope("UpdateQuantile"):
          float_features = [tf.squeeze(f, axis=1) for f in
                            features_lib.transform(features, float_columns)]
          return grower.accumulate_quantiles(
              quantile_accumulator, float_features, weights,
              are_boundaries_ready)

      if not float_columns:
        step = grow()
      else:
        # The quantile steps leave global_step alone, as in 2.8.
        tf.compat.v1.add_to_collection(GUARD_EXEMPT_COLLECTION,
                                       are_boundaries_ready)
        step = growers.cond(are_boundaries_ready, grow, update_quantiles)
      if train_in_memory:
        # 2.8 cached the features while transforming them, in every step.
        return tf.group(step, cache_features)
      return step

  spec = head.create_estimator_spec(features=features, mode=mode,
                                    labels=labels, train_op_fn=train_op_fn,
                                    logits=logits)
  return spec._replace(
      training_hooks=tuple(spec.training_hooks) + (StopAtAttemptsHook(
          num_finalized_trees, num_attempted_layers, hparams.n_trees,
          hparams.max_depth),),
      training_chief_hooks=(GrowerInitializationHook(grower.chief_init_op()),)
      + tuple(spec.training_chief_hooks))
