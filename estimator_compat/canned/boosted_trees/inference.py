"""Evaluation and prediction of a trained ensemble without the BoostedTrees
kernels (TF 2.21 registers none).

The checkpoint holds the ensemble as `boosted_trees:0_stamp` and
`boosted_trees:0_serialized` (a TreeEnsemble message) and the float
columns' quantile boundaries as
`boosted_trees/QuantileAccumulator:0_bucket_boundaries_<i>`. Here
SaveableObjects under those names restore them into plain variables, float
features are bucketized with TF ops (features.bucketize), and the trees are
walked with standard TF ops (tree_graph.py) as BoostedTreesPredict did:
each example goes left where its bucket is <= a bucketized split's
threshold (== a categorical split's value), and the logit is the sum over
trees of tree weight x leaf value. `ensemble_logits` is the same walk in
NumPy, on a serialized ensemble.
"""

from typing import List, Sequence

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import resources
from tensorflow.python.training.saving import saveable_object

from estimator_compat.canned.boosted_trees import tree_graph
from estimator_compat.canned.boosted_trees import tree_proto


def _restorable_variable(initial_value, dtype, name: str, shape=None):
  """A variable outside every collection: the Saver fills it through a
  SaveableObject, and no init op resets it after the restore."""
  return tf.compat.v1.Variable(initial_value, dtype=dtype, trainable=False,
                               collections=[], validate_shape=False,
                               name=name, use_resource=True, shape=shape)


def _resource_tensor(variable, name: str) -> tf.Tensor:
  """The variable's handle as a tensor of op `name` exactly: the op 2.8's
  ensemble or quantile resource had (its SavedModel's graph held them)."""
  graph = tf.compat.v1.get_default_graph()
  taken = name in {op.name for op in graph.get_operations()}
  # A trailing slash names the op as it is (no scope, no suffix).
  return tf.identity(variable.handle, name=None if taken else name + "/")


class _TensorsSaveable(saveable_object.SaveableObject):
  """Saves and restores `variables` under checkpoint keys `names`.

  Named after the tensor of 2.8's resource op `resource_name`
  (`boosted_trees:0`): a SavedModel's MetaGraph lists the SAVEABLE_OBJECTS
  collection by name, and loading it looks them up in the graph.
  """

  def __init__(self, variables, names: Sequence[str], resource_name: str):
    self._variables = variables
    specs = [saveable_object.SaveSpec(v.read_value(), "", key)
             for v, key in zip(variables, names)]
    super().__init__(variables[0], specs,
                     _resource_tensor(variables[0], resource_name).name)

  def restore(self, restored_tensors, restored_shapes):
    del restored_shapes
    return tf.group([v.assign(t) for v, t in zip(self._variables,
                                                 restored_tensors)])


def ensemble_variables(scope: str):
  """The serialized ensemble and its stamp, saved and restored as
  `<scope>:0_serialized` and `<scope>:0_stamp`."""
  name = scope.rstrip("/")
  serialized = _restorable_variable("", tf.string, "serialized_ensemble")
  stamp = _restorable_variable(np.int64(0), tf.int64, "ensemble_stamp")
  tf.compat.v1.add_to_collection(
      tf.compat.v1.GraphKeys.SAVEABLE_OBJECTS,
      _TensorsSaveable([stamp, serialized],
                       [f"{name}:0_stamp", f"{name}:0_serialized"], name))
  return serialized, stamp


def _initialized_without_checkpoint(variables) -> None:
  """Shared resources: the Scaffold's init op starts them empty where no
  checkpoint restores them (2.8's predict() before any training gave the
  empty ensemble's zero logits)."""
  for variable in variables:
    resources.register_resource(variable.handle, variable.initializer,
                                variable.is_initialized())


def restored_ensemble(scope: str) -> tf.Variable:
  """The serialized ensemble, restored from `<scope>:0_serialized`."""
  serialized, stamp = ensemble_variables(scope)
  _initialized_without_checkpoint([serialized, stamp])
  return serialized


def boundary_variables(scope: str, accumulator_name: str,
                       num_streams: int) -> List[tf.Variable]:
  """Each float feature's quantile boundaries (empty at first), saved and
  restored under the quantile accumulator's keys
  `<scope><accumulator_name>:0_bucket_boundaries_<i>`."""
  name = f"{scope}{accumulator_name}"
  # Their length is the checkpoint's: no static shape.
  variables = [_restorable_variable(np.zeros([0], np.float32), tf.float32,
                                    f"{accumulator_name}_boundaries_{i}",
                                    shape=tf.TensorShape([None]))
               for i in range(num_streams)]
  tf.compat.v1.add_to_collection(
      tf.compat.v1.GraphKeys.SAVEABLE_OBJECTS,
      _TensorsSaveable(variables,
                       [f"{name}:0_bucket_boundaries_{i}"
                        for i in range(num_streams)], name))
  return variables


def restored_boundaries(scope: str, accumulator_name: str,
                        num_streams: int) -> List[tf.Tensor]:
  """Each float feature's quantile boundaries, restored from the quantile
  accumulator's keys."""
  variables = boundary_variables(scope, accumulator_name, num_streams)
  _initialized_without_checkpoint(variables)
  return [tf.reshape(v.read_value(), [-1]) for v in variables]


def _leaf_values(leaf, logits_dimension: int) -> np.ndarray:
  if leaf.HasField("vector"):
    return np.asarray(leaf.vector.value, np.float32)
  return np.full([logits_dimension], leaf.scalar, np.float32)


def ensemble_logits(serialized: bytes, features: Sequence[np.ndarray],
                    logits_dimension: int) -> np.ndarray:
  """The `[batch, logits_dimension]` logits of the serialized ensemble for
  bucketized `features` (each `[batch, dimensions]`)."""
  batch = features[0].shape[0] if features else 0
  logits = np.zeros([batch, logits_dimension], np.float32)
  if not serialized:
    return logits
  ensemble = tree_proto.TreeEnsemble.FromString(serialized)
  for tree, weight in zip(ensemble.trees, ensemble.tree_weights):
    for example in range(batch):
      node = tree.nodes[0]
      while node.WhichOneof("node") != "leaf":
        kind = node.WhichOneof("node")
        split = getattr(node, kind)
        bucket = features[split.feature_id][example, split.dimension_id]
        goes_left = (bucket <= split.threshold if kind == "bucketized_split"
                     else bucket == split.value)
        node = tree.nodes[split.left_id if goes_left else split.right_id]
      logits[example] += np.float32(weight) * _leaf_values(node.leaf,
                                                           logits_dimension)
  return logits


def predict(serialized: tf.Tensor, features: Sequence[tf.Tensor],
            logits_dimension: int) -> tf.Tensor:
  """The ensemble's logits for bucketized `features`, in the graph, with
  standard ops only (tree_graph.py): evaluation, prediction and the
  exported SavedModel need no BoostedTrees kernel and no `py_func`."""
  return tree_graph.predict(serialized, features, logits_dimension)
