"""Tiny data, columns and inputs of the BoostedTrees goldens.

40 examples in batches of 10 (a layer from `n_batches_per_layer=2`
batches), a bucketized column, a raw numeric column (bucketized by learned
quantiles) and an indicator column; the observations hold what only the
trees show: the decoded ensemble and the feature importances.
"""

import numpy as np
import tensorflow as tf
from google.protobuf import json_format

N = 40
BATCH = 10
_RNG = np.random.RandomState(11)
FEATURES = {
    "age": _RNG.uniform(0.0, 10.0, size=(N, 1)).astype(np.float32),
    "fare": _RNG.uniform(0.0, 5.0, size=(N, 1)).astype(np.float32),
    "cls": _RNG.choice(["first", "second", "third"], size=(N, 1)),
}
_SCORE = (FEATURES["age"][:, 0] / 5.0 - 1.0 + (FEATURES["fare"][:, 0] - 2.5)
          + (FEATURES["cls"][:, 0] == "first") * 1.0
          + _RNG.normal(scale=0.3, size=N))
BINARY = (_SCORE > 0).astype(np.int64).reshape(N, 1)
TARGET = _SCORE.astype(np.float32).reshape(N, 1)
_SEEN = {}


def columns(fc):
  return [
      fc.bucketized_column(fc.numeric_column("age"), [2.0, 4.0, 6.0, 8.0]),
      fc.numeric_column("fare"),
      fc.indicator_column(fc.categorical_column_with_vocabulary_list(
          "cls", ["first", "second", "third"])),
  ]


def bucketized_columns(fc):
  """The columns without a raw numeric one (no quantile sketch)."""
  return [
      fc.bucketized_column(fc.numeric_column("age"), [2.0, 4.0, 6.0, 8.0]),
      fc.bucketized_column(fc.numeric_column("fare"),
                           [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0]),
      fc.indicator_column(fc.categorical_column_with_vocabulary_list(
          "cls", ["first", "second", "third"])),
  ]


def input_fns(labels):
  """train (repeated, in order), eval and predict input_fns."""

  def train_input_fn():
    data = tf.data.Dataset.from_tensor_slices((FEATURES, labels))
    return data.repeat().batch(BATCH)

  def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices((FEATURES, labels)).batch(N)

  def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices(FEATURES).batch(7)

  return train_input_fn, eval_input_fn, predict_input_fn


def config(tf_module):
  return tf_module.estimator.RunConfig(tf_random_seed=3,
                                       save_checkpoints_steps=1000)


def _tree_ensemble_class():
  try:
    # TF 2.8 (recording) has the message's module; TF 2.21 does not.
    # pylint: disable=g-import-not-at-top
    from tensorflow.core.kernels.boosted_trees import boosted_trees_pb2
    return boosted_trees_pb2.TreeEnsemble
  except ImportError:
    from estimator_compat.canned.boosted_trees import tree_proto
    return tree_proto.TreeEnsemble


def decoded_trees(serialized: bytes):
  """The ensemble as a JSON-able dict (protobuf's JSON mapping)."""
  ensemble = _tree_ensemble_class().FromString(serialized)
  return json_format.MessageToDict(ensemble, preserving_proto_field_name=True)


def reset():
  _SEEN.clear()


def _explanations(estimator, predict_input_fn):
  """Bias and directional feature contributions of each example."""
  return [[float(p["bias"]), [[name, float(value)]
                              for name, value in p["dfc"].items()],
           float(np.ravel(p["logistic"] if "logistic" in p
                          else p["predictions"])[0])]
          for p in estimator.experimental_predict_with_explanations(
              predict_input_fn)]


def run_training(estimator, train_input_fn, predict_input_fn=None):
  """Trains until the estimator's own hook stops it; records the trees, and
  with `predict_input_fn` the explanations of its examples."""
  estimator.train(train_input_fn, max_steps=1000)
  _SEEN["global_step"] = int(estimator.get_variable_value("global_step"))
  serialized = estimator.get_variable_value("boosted_trees:0_serialized")
  _SEEN["trees"] = decoded_trees(serialized)
  _SEEN["feature_importances"] = [
      [name, float(value)] for name, value in
      estimator.experimental_feature_importances(normalize=False).items()]
  _SEEN["feature_importances_normalized"] = [
      [name, float(value)] for name, value in
      estimator.experimental_feature_importances(normalize=True).items()]
  if predict_input_fn is not None:
    _SEEN["explanations"] = _explanations(estimator, predict_input_fn)


def observations():
  return dict(_SEEN)
