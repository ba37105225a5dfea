"""`tf.estimator.BoostedTreesClassifier` / `BoostedTreesRegressor` /
`BoostedTreesEstimator`.

TensorFlow Estimator 2.8's gradient boosted trees (removed in 2.9) on the
graph engine: the same constructor arguments, checkpoint
(`boosted_trees:0_serialized` and friends), heads,
`experimental_feature_importances` and
`experimental_predict_with_explanations`, under `tf.estimator` and
`tf.compat.v1.estimator` alike. TF 2.21 has no BoostedTrees kernels: the
NumPy ones of kernels.py run instead; what they do not cover yet raises a
ValueError naming it (docs/boosted-trees.md).
"""

import collections
from typing import Dict

import numpy as np
import tensorflow as tf

from estimator_compat import estimator as estimator_lib
from estimator_compat.canned.boosted_trees import explanations
from estimator_compat.canned.boosted_trees import features as features_lib
from estimator_compat.canned.boosted_trees import growers
from estimator_compat.canned.boosted_trees import heads
from estimator_compat.canned.boosted_trees import model
from estimator_compat.canned.boosted_trees import tree_proto
from estimator_compat.head import tf1_heads

SERIALIZED_ENSEMBLE_KEY = "boosted_trees:0_serialized"


def feature_importances_of(ensemble, num_features: int,
                           normalize: bool) -> np.ndarray:
  """Gain-based importance of each feature id in `ensemble` (a
  TreeEnsemble message): the gains of its splits weighted by tree weight.

  Raises:
    ValueError: a split type other than bucketized.
    AssertionError: normalizing negative importances or an ensemble
      without splits (as the Estimator did).
  """
  per_tree = np.zeros((len(ensemble.trees), num_features))
  for index, tree in enumerate(ensemble.trees):
    for node in tree.nodes:
      node_type = node.WhichOneof("node")
      if node_type == "bucketized_split":
        per_tree[index, node.bucketized_split.feature_id] += (
            node.metadata.gain)
      elif node_type != "leaf":
        raise ValueError(f"Unexpected split type {node_type}")
  weights = np.array(ensemble.tree_weights).reshape(-1, 1)
  importances = np.sum(per_tree * weights, axis=0)
  if normalize:
    assert np.all(importances >= 0), "feature_importances must be non-negative."
    total = np.sum(importances)
    assert total > 0, "Trees are all empty or contain only a root node."
    importances /= total
  return importances


def sum_by_name_and_sort(names, values) -> Dict[str, float]:
  """Sums `values` per name; sorted by absolute sum, largest first."""
  sums = {}
  for name, value in zip(names, values):
    sums[name] = sums.setdefault(name, 0) + value
  return collections.OrderedDict(
      sorted(sums.items(), key=lambda item: abs(item[1]), reverse=True))


class _BoostedTreesBase(estimator_lib.Estimator):
  """What the BoostedTrees estimators share: feature importances."""

  def __init__(self, model_fn, model_dir, config, feature_columns, head,
               center_bias: bool, is_classification: bool,
               quantile_sketch_epsilon: float):
    super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)
    self._sorted_feature_columns = features_lib.sorted_columns(
        feature_columns)
    self._head = head
    self._n_features = features_lib.num_features(self._sorted_feature_columns)
    self._feature_col_names = features_lib.feature_names(
        self._sorted_feature_columns)
    self._center_bias = center_bias
    self._is_classification = is_classification
    self._quantile_sketch_epsilon = quantile_sketch_epsilon

  def experimental_feature_importances(self, normalize: bool = False
                                       ) -> Dict[str, float]:
    """Gain-based feature importances of the trained ensemble.

    Args:
      normalize: scale them to sum to 1.

    Returns:
      An OrderedDict of feature column name to importance, the most
      important first.

    Raises:
      ValueError: no trained ensemble in model_dir, or normalizing an
        ensemble without splits or with negative importances.
    """
    reader = tf.train.load_checkpoint(self._model_dir)
    serialized = reader.get_tensor(SERIALIZED_ENSEMBLE_KEY)
    if not serialized:
      raise ValueError("Found empty serialized string for TreeEnsemble.You "
                       "should only call this method after training.")
    ensemble = tree_proto.TreeEnsemble.FromString(serialized)
    importances = feature_importances_of(ensemble, self._n_features,
                                         normalize)
    return sum_by_name_and_sort(self._feature_col_names, importances)


  def experimental_predict_with_explanations(self, input_fn,
                                             predict_keys=None, hooks=None,
                                             checkpoint_path=None):
    """Predictions with directional feature contributions per example.

    Each prediction dict gains 'bias' (the prediction of the bias tree
    alone) and 'dfc' (an OrderedDict of feature column name to its
    contribution, largest absolute value first).

    Args:
      input_fn: the predict input_fn.
      predict_keys: prediction keys to keep ('bias' and 'dfc' always come).
      hooks: SessionRunHooks for the prediction.
      checkpoint_path: a checkpoint to use instead of the latest one.

    Yields:
      One prediction dict per example.

    Raises:
      ValueError: the estimator was made without center_bias.
    """
    if not self._center_bias:
      raise ValueError("center_bias must be enabled during estimator "
                       "instantiation when using "
                       "experimental_predict_with_explanations. Fix: pass "
                       "center_bias=True.")
    if self._head.logits_dimension > 1:
      raise ValueError("experimental_predict_with_explanations does not yet "
                       "support multi-class classification and multi-label "
                       "regression. Fix: explain a model with "
                       "one-dimensional logits.")
    head, columns = self._head, self._sorted_feature_columns

    def explanations_fn(features, labels, mode):
      del labels, mode
      return model.explanations_model_fn(features, head, columns)

    explainer = estimator_lib.Estimator(model_fn=explanations_fn,
                                        model_dir=self.model_dir,
                                        config=self.config)
    if predict_keys is not None:
      predict_keys = set(predict_keys) | {explanations.DEBUG_KEY}
    for prediction in explainer.predict(
        input_fn, predict_keys=predict_keys, hooks=hooks,
        checkpoint_path=checkpoint_path, yield_single_examples=True):
      bias, contributions = explanations.bias_and_contributions(
          prediction.pop(explanations.DEBUG_KEY), self._feature_col_names,
          self._is_classification)
      prediction["bias"] = bias
      prediction["dfc"] = contributions
      yield prediction


def _hparams(n_trees, max_depth, learning_rate, l1_regularization,
             l2_regularization, tree_complexity, min_node_weight, center_bias,
             pruning_mode, quantile_sketch_epsilon) -> growers.TreeHParams:
  hparams = growers.TreeHParams(
      n_trees, max_depth, learning_rate, l1_regularization,
      l2_regularization, tree_complexity, min_node_weight, center_bias,
      pruning_mode, quantile_sketch_epsilon)
  growers.validate(hparams)
  # The pruning options are checked when train() builds the grower, as in
  # 2.8: evaluate() and predict() accept them.
  return hparams


class BoostedTreesClassifier(_BoostedTreesBase):
  """A gradient boosted trees classifier.

  Args:
    feature_columns: numeric, bucketized, indicator or categorical columns.
    n_batches_per_layer: batches whose statistics build each layer.
    model_dir: where checkpoints go.
    n_classes: the number of classes.
    weight_column: name or numeric column of example weights.
    label_vocabulary: string labels, in class order.
    n_trees: trees to build.
    max_depth: depth of each tree.
    learning_rate: shrinkage of each tree.
    l1_regularization: L1 on leaf weights.
    l2_regularization: L2 on leaf weights.
    tree_complexity: penalty per leaf (with pruning).
    min_node_weight: smallest mean hessian of a node to split.
    config: a RunConfig.
    center_bias: start the first tree with the prior logit.
    pruning_mode: 'none', 'pre' or 'post'.
    quantile_sketch_epsilon: error bound of the float columns' quantiles
      (1 / epsilon buckets).
    train_in_memory: the input_fn gives the whole data set as one batch
      (n_batches_per_layer=1): each step grows a layer at once.

  Raises:
    ValueError: a bad or unported argument.
  """

  def __init__(self, feature_columns, n_batches_per_layer, model_dir=None,
               n_classes=2, weight_column=None, label_vocabulary=None,
               n_trees=100, max_depth=6, learning_rate=0.1,
               l1_regularization=0., l2_regularization=0.,
               tree_complexity=0., min_node_weight=0., config=None,
               center_bias=False, pruning_mode="none",
               quantile_sketch_epsilon=0.01, train_in_memory=False):
    if n_classes > 2 and center_bias:
      raise ValueError("center_bias not yet support with n_classes > 2. Fix: "
                       "pass center_bias=False.")
    head, closed_form = heads.classification_head(
        n_classes, weight_column, label_vocabulary=label_vocabulary)
    hparams = _hparams(n_trees, max_depth, learning_rate, l1_regularization,
                       l2_regularization, tree_complexity, min_node_weight,
                       center_bias, pruning_mode, quantile_sketch_epsilon)

    def _model_fn(features, labels, mode, config):
      return model.bt_model_fn(
          features, labels, mode, head, feature_columns, hparams,
          n_batches_per_layer, config,
          closed_form_grad_and_hess_fn=closed_form,
          weight_column=weight_column, train_in_memory=train_in_memory)

    super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                     feature_columns=feature_columns, head=head,
                     center_bias=center_bias, is_classification=True,
                     quantile_sketch_epsilon=quantile_sketch_epsilon)


class BoostedTreesRegressor(_BoostedTreesBase):
  """A gradient boosted trees regressor.

  Args:
    feature_columns: numeric, bucketized, indicator or categorical columns.
    n_batches_per_layer: batches whose statistics build each layer.
    model_dir: where checkpoints go.
    label_dimension: the number of label values per example.
    weight_column: name or numeric column of example weights.
    n_trees: trees to build.
    max_depth: depth of each tree.
    learning_rate: shrinkage of each tree.
    l1_regularization: L1 on leaf weights.
    l2_regularization: L2 on leaf weights.
    tree_complexity: penalty per leaf (with pruning).
    min_node_weight: smallest mean hessian of a node to split.
    config: a RunConfig.
    center_bias: start the first tree with the label mean.
    pruning_mode: 'none', 'pre' or 'post'.
    quantile_sketch_epsilon: error bound of the float columns' quantiles
      (1 / epsilon buckets).
    train_in_memory: the input_fn gives the whole data set as one batch
      (n_batches_per_layer=1): each step grows a layer at once.

  Raises:
    ValueError: a bad or unported argument.
  """

  def __init__(self, feature_columns, n_batches_per_layer, model_dir=None,
               label_dimension=1, weight_column=None, n_trees=100,
               max_depth=6, learning_rate=0.1, l1_regularization=0.,
               l2_regularization=0., tree_complexity=0., min_node_weight=0.,
               config=None, center_bias=False, pruning_mode="none",
               quantile_sketch_epsilon=0.01, train_in_memory=False):
    if label_dimension > 1 and center_bias:
      raise ValueError("center_bias not yet support with label_dimension > 1. "
                       "Fix: pass center_bias=False.")
    head = heads.regression_head(label_dimension, weight_column)
    hparams = _hparams(n_trees, max_depth, learning_rate, l1_regularization,
                       l2_regularization, tree_complexity, min_node_weight,
                       center_bias, pruning_mode, quantile_sketch_epsilon)

    def _model_fn(features, labels, mode, config):
      return model.bt_model_fn(features, labels, mode, head, feature_columns,
                               hparams, n_batches_per_layer, config,
                               weight_column=weight_column,
                               train_in_memory=train_in_memory)

    super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                     feature_columns=feature_columns, head=head,
                     center_bias=center_bias, is_classification=False,
                     quantile_sketch_epsilon=quantile_sketch_epsilon)


class BoostedTreesEstimator(_BoostedTreesBase):
  """Gradient boosted trees with a head of your own (a custom loss).

  As in tensorflow-estimator 2.8: the gradients and hessians come from the
  head's training loss, weight_column is accepted but the quantile sketch
  weighs every example 1, and only the TF1 binary and multi-class heads
  count as classification (for explanations' probabilities).

  Args:
    feature_columns: numeric, bucketized, indicator or categorical columns.
    n_batches_per_layer: batches whose statistics build each layer.
    head: the head.
    model_dir: where checkpoints go.
    weight_column: accepted as 2.8 accepted it (unused).
    n_trees: trees to build.
    max_depth: depth of each tree.
    learning_rate: shrinkage of each tree.
    l1_regularization: L1 on leaf weights.
    l2_regularization: L2 on leaf weights.
    tree_complexity: penalty per leaf (with pruning).
    min_node_weight: smallest mean hessian of a node to split.
    config: a RunConfig.
    center_bias: start the first tree with the prior logit.
    pruning_mode: 'none', 'pre' or 'post'.
    quantile_sketch_epsilon: error bound of the float columns' quantiles
      (1 / epsilon buckets).

  Raises:
    ValueError: a bad argument.
  """

  def __init__(self, feature_columns, n_batches_per_layer, head,
               model_dir=None, weight_column=None, n_trees=100, max_depth=6,
               learning_rate=0.1, l1_regularization=0., l2_regularization=0.,
               tree_complexity=0., min_node_weight=0., config=None,
               center_bias=False, pruning_mode="none",
               quantile_sketch_epsilon=0.01):
    del weight_column  # 2.8 did not pass it on either.
    hparams = _hparams(n_trees, max_depth, learning_rate, l1_regularization,
                       l2_regularization, tree_complexity, min_node_weight,
                       center_bias, pruning_mode, quantile_sketch_epsilon)

    def _model_fn(features, labels, mode, config):
      return model.bt_model_fn(features, labels, mode, head, feature_columns,
                               hparams, n_batches_per_layer, config)

    super().__init__(
        model_fn=_model_fn, model_dir=model_dir, config=config,
        feature_columns=feature_columns, head=head, center_bias=center_bias,
        is_classification=isinstance(head, (tf1_heads.TF1BinaryClassHead,
                                            tf1_heads.TF1MultiClassHead)),
        quantile_sketch_epsilon=quantile_sketch_epsilon)
