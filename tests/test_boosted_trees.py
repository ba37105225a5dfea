"""BoostedTrees (tensorflow-estimator 2.8) checked against the goldens
recorded on the real 2.8 code (tools/record_boosted_trees_goldens.sh and
tools/record_boosted_trees_kernels.py).

TF 2.21 registers no kernel for the BoostedTrees ops; the NumPy kernels
that replace them are checked against TF 2.8.4's kernels on recorded
inputs (growth, prediction, the quantile sketch), and the estimators
replay recorded 2.8 training runs from the same starting checkpoint: the
ensemble message, feature ids and names, feature importances, checkpoint
keys and values, metrics, predictions and explanations, plus the
argument checks.
"""

import importlib
import json
import os

import numpy as np
import pytest
import tensorflow as tf
from google.protobuf import json_format
from tensorflow.python.training.saving import saveable_object_util

from estimator_compat import mode_keys
from estimator_compat.errors import NeedsGraphEngine
from estimator_compat import run_config as run_config_lib
from estimator_compat.canned.boosted_trees import estimators
from estimator_compat.canned.boosted_trees import explanations
from estimator_compat.canned.boosted_trees import features as features_lib
from estimator_compat.canned.boosted_trees import growers
from estimator_compat.canned.boosted_trees import heads
from estimator_compat.canned.boosted_trees import inference
from estimator_compat.canned.boosted_trees import kernels
from estimator_compat.canned.boosted_trees import model
from estimator_compat.canned.boosted_trees import quantiles
from estimator_compat.canned.boosted_trees import tree_proto
from migration.recorders import golden_recorder
from migration import program as program_lib
from tests.golden_programs import _boosted_trees_data as data

GOLDENS = os.path.join(os.path.dirname(__file__), "boosted_trees_goldens")
PROGRAMS = ("boosted_trees_classifier", "boosted_trees_regressor")


def _golden(name):
  folder = os.path.join(GOLDENS, name)
  with open(os.path.join(folder, "results.json")) as f:
    results = json.load(f)
  variables = dict(np.load(os.path.join(folder, "variables.npz")))
  return results, variables


@pytest.mark.parametrize("name", PROGRAMS)
def test_tree_message_reads_the_recorded_ensemble(name):
  """The schema decodes the 2.8 ensemble as TF 2.8's own module did, and
  writes it back byte for byte (no field left unknown)."""
  results, variables = _golden(name)
  serialized = variables["boosted_trees:0_serialized"].item()
  ensemble = tree_proto.TreeEnsemble.FromString(serialized)
  decoded = json_format.MessageToDict(ensemble,
                                      preserving_proto_field_name=True)
  assert decoded == results["observations"]["trees"]
  assert ensemble.SerializeToString() == serialized
  assert len(ensemble.trees) >= 3


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("normalize", [False, True])
def test_feature_importances_match_the_recorded_ones(name, normalize):
  results, variables = _golden(name)
  columns = features_lib.sorted_columns(data.columns(tf.feature_column))
  ensemble = tree_proto.TreeEnsemble.FromString(
      variables["boosted_trees:0_serialized"].item())
  importances = estimators.sum_by_name_and_sort(
      features_lib.feature_names(columns),
      estimators.feature_importances_of(
          ensemble, features_lib.num_features(columns), normalize))
  key = ("feature_importances_normalized" if normalize
         else "feature_importances")
  expected = results["observations"][key]
  assert list(importances) == [entry[0] for entry in expected]
  np.testing.assert_allclose(list(importances.values()),
                             [entry[1] for entry in expected], rtol=1e-6)


def test_feature_ids_and_bucket_groups():
  """age (bucketized) is feature 0, cls (indicator) 1-3, fare (numeric) 4,
  as the recorded trees' splits on feature 4 (fare) show; the groups are
  those 2.8's `_group_features_by_num_buckets_and_split_type` gave for
  these columns (run on the real 2.8 code): the bucketized group last."""
  columns = features_lib.sorted_columns(data.columns(tf.feature_column))
  assert features_lib.feature_names(columns) == [
      "age_bucketized", "cls", "cls", "cls", "fare"]
  sizes, ids, splits = features_lib.bucket_groups(columns, 10)
  assert sizes == [2, 10, 5]
  assert ids == [(1, 2, 3), (4,), (0,)]
  assert splits == [("inequality",) * 3, ("inequality",), ("inequality",)]
  categorical = tf.feature_column.categorical_column_with_identity("k", 7)
  assert features_lib.bucket_groups([categorical], 10) == (
      [7], [(0,)], [("equality",)])


def _checkpoint_keys(mode, columns, hparams, head):
  with tf.Graph().as_default():
    features = {k: tf.constant(v[:10]) for k, v in data.FEATURES.items()}
    labels = tf.constant(data.BINARY[:10])
    model.bt_model_fn(features, labels, mode, head, columns, hparams, 2,
                      run_config_lib.RunConfig())
    saveables = saveable_object_util.validate_and_slice_inputs(
        saveable_object_util.op_list_to_dict(
            tf.compat.v1.global_variables() + tf.compat.v1.get_collection(
                tf.compat.v1.GraphKeys.SAVEABLE_OBJECTS)))
    return sorted(spec.name for saveable in saveables
                  for spec in saveable.specs)


def test_training_graph_saves_the_recorded_checkpoint_keys():
  results, _ = _golden("boosted_trees_bucketized")
  hparams = growers.TreeHParams(3, 2, 0.3, 0., 0.01, 0., 0., True, "none",
                                0.01)
  keys = _checkpoint_keys(mode_keys.ModeKeys.TRAIN,
                          data.bucketized_columns(tf.feature_column),
                          hparams, heads.classification_head(2)[0])
  assert keys == sorted(results["variables"])


@pytest.mark.parametrize("name", PROGRAMS)
def test_evaluation_graph_restores_the_recorded_checkpoint_keys(name):
  """With a raw numeric column: the ensemble, the quantile boundaries and
  the global step (2.8's training flags are not read back)."""
  results, _ = _golden(name)
  hparams = growers.TreeHParams(3, 2, 0.3, 0., 0.01, 0., 0., False, "none",
                                0.1)
  head = (heads.classification_head(2)[0] if name.endswith("classifier")
          else heads.regression_head(1))
  keys = _checkpoint_keys(mode_keys.ModeKeys.EVAL,
                          data.columns(tf.feature_column), hparams, head)
  assert keys == sorted(k for k in results["variables"]
                        if not k.endswith(("_ready", "_needed")))


def test_closed_form_logistic_gradients_match_autodiff():
  head, closed_form = heads.classification_head(2)
  logits = tf.constant([[0.3], [-1.2], [2.0]])
  labels = tf.constant([[1], [0], [0]], dtype=tf.int64)
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(logits)
    with tf.GradientTape() as inner:
      inner.watch(logits)
      loss = head.create_loss({}, mode_keys.ModeKeys.TRAIN, logits,
                              labels).training_loss
    gradients = inner.gradient(loss, logits)
  hessians = tape.gradient(gradients, logits)
  ours = closed_form(logits, labels)
  np.testing.assert_allclose(ours[0], gradients, rtol=1e-5)
  np.testing.assert_allclose(ours[1], hessians, rtol=1e-5)


@pytest.mark.parametrize("kwargs, option", [
    (dict(n_classes=3, center_bias=True), "n_classes > 2"),
    (dict(n_trees=0), "n_trees"),
    (dict(l2_regularization=-1.), "l2"),
])
def test_classifier_refuses_bad_or_unported_options(kwargs, option):
  with pytest.raises(ValueError, match=option):
    estimators.BoostedTreesClassifier(data.columns(tf.feature_column),
                                      n_batches_per_layer=1, **kwargs)


@pytest.mark.parametrize("kwargs, option", [
    (dict(tree_complexity=0.1), "Tree complexity"),
    (dict(pruning_mode="post"), "tree_complexity must be positive"),
    (dict(pruning_mode="pre"), "tree_complexity must be positive"),
])
def test_pruning_options_are_refused_at_train(kwargs, option, tmp_path):
  """As in 2.8 (its grower checked them): the constructor accepts them,
  train() refuses them before any checkpoint."""
  estimator = estimators.BoostedTreesClassifier(
      data.bucketized_columns(tf.feature_column), n_batches_per_layer=1,
      model_dir=str(tmp_path / "model"),
      config=run_config_lib.RunConfig(engine="graph"), **kwargs)
  with pytest.raises(ValueError, match=option):
    estimator.train(data.input_fns(data.BINARY)[0], max_steps=1)
  assert not os.path.exists(str(tmp_path / "model" / "checkpoint"))


def test_regressor_refuses_center_bias_with_label_dimension_2():
  with pytest.raises(ValueError, match="label_dimension > 1"):
    estimators.BoostedTreesRegressor(data.columns(tf.feature_column),
                                     n_batches_per_layer=1,
                                     label_dimension=2, center_bias=True)


def _write_final_checkpoint(variables, model_dir):
  """The golden's final variables as `model.ckpt-<step>` in model_dir."""
  os.makedirs(model_dir, exist_ok=True)
  step = int(variables["global_step"])
  names = sorted(variables)
  tensors = [tf.constant(variables[n].item() if variables[n].dtype.kind == "S"
                         else variables[n]) for n in names]
  tf.raw_ops.SaveV2(prefix=os.path.join(model_dir, f"model.ckpt-{step}"),
                    tensor_names=names, shape_and_slices=[""] * len(names),
                    tensors=tensors)
  with open(os.path.join(model_dir, "checkpoint"), "w") as f:
    f.write(f'model_checkpoint_path: "model.ckpt-{step}"\n')


def _golden_estimator(name, model_dir):
  """The program and our estimator with the program's arguments."""
  program = importlib.import_module(f"tests.golden_programs.{name}")
  if name.endswith("classifier"):
    kwargs = dict(n_trees=3, max_depth=2, learning_rate=0.3,
                  l2_regularization=0.01, center_bias=True)
    cls = estimators.BoostedTreesClassifier
  else:
    kwargs = dict(n_trees=4, max_depth=2, learning_rate=0.2,
                  l1_regularization=0.01, l2_regularization=0.1,
                  tree_complexity=0.001, min_node_weight=0.01,
                  pruning_mode="pre")
    cls = estimators.BoostedTreesRegressor
  estimator = cls(data.columns(tf.feature_column), n_batches_per_layer=2,
                  model_dir=model_dir, quantile_sketch_epsilon=0.1,
                  config=run_config_lib.RunConfig(tf_random_seed=3),
                  **kwargs)
  return program, estimator


@pytest.mark.parametrize("name", PROGRAMS)
def test_evaluate_and_predict_a_2_8_model_dir(name, engine_name, tmp_path):
  """The model_dir left by the real 2.8 run evaluates and predicts here as it
  did there (no BoostedTrees kernel involved), on every engine."""
  results, variables = _golden(name)
  model_dir = str(tmp_path / "model")
  _write_final_checkpoint(variables, model_dir)
  program, estimator = _golden_estimator(name, model_dir)
  if engine_name == "function":
    with pytest.raises(Exception, match="graph engine"):
      estimator.evaluate(program.eval_input_fn)
    return
  metrics = estimator.evaluate(program.eval_input_fn)
  assert sorted(metrics) == sorted(results["eval_metrics"])
  for key, expected in results["eval_metrics"].items():
    np.testing.assert_allclose(metrics[key], expected, rtol=1e-5,
                               err_msg=key)
  golden_predictions = dict(np.load(os.path.join(GOLDENS, name,
                                                 "predictions.npz")))
  predictions = list(estimator.predict(program.predict_input_fn))
  assert sorted(predictions[0]) == sorted(golden_predictions)
  for key, expected in golden_predictions.items():
    ours = np.stack([p[key] for p in predictions])
    if expected.dtype.kind == "S":
      np.testing.assert_array_equal(ours.astype(np.bytes_), expected)
    else:
      np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6,
                                 err_msg=key)


def test_explanations_match_the_recorded_ones(engine_name, tmp_path):
  """experimental_predict_with_explanations from the 2.8 run's model_dir:
  the same bias, contributions (in the same order) and probabilities."""
  name = "boosted_trees_classifier"
  results, variables = _golden(name)
  model_dir = str(tmp_path / "model")
  _write_final_checkpoint(variables, model_dir)
  program, estimator = _golden_estimator(name, model_dir)
  if engine_name == "function":
    with pytest.raises(Exception, match="graph engine"):
      list(estimator.experimental_predict_with_explanations(
          program.predict_input_fn))
    return
  ours = list(estimator.experimental_predict_with_explanations(
      program.predict_input_fn))
  expected = results["observations"]["explanations"]
  assert len(ours) == len(expected) == data.N
  for prediction, (bias, contributions, probability) in zip(ours, expected):
    np.testing.assert_allclose(prediction["bias"], bias, rtol=1e-5)
    assert list(prediction["dfc"]) == [entry[0] for entry in contributions]
    np.testing.assert_allclose(list(prediction["dfc"].values()),
                               [entry[1] for entry in contributions],
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(prediction["logistic"][0], probability,
                               rtol=1e-5)


def test_explanations_need_center_bias(tmp_path):
  _, estimator = _golden_estimator("boosted_trees_regressor",
                                   str(tmp_path / "model"))
  with pytest.raises(ValueError, match="center_bias must be enabled"):
    next(estimator.experimental_predict_with_explanations(
        lambda: ({}, None)))


def test_example_path_counts_a_bias_only_first_tree():
  """A first tree that is only the bias leaf adds the bias to every later
  logit on the path (BoostedTreesExampleDebugOutputs' rule)."""
  ensemble = tree_proto.TreeEnsemble()
  ensemble.trees.add().nodes.add().leaf.scalar = 0.5
  tree = ensemble.trees.add()
  root = tree.nodes.add()
  root.bucketized_split.feature_id = 0
  root.bucketized_split.threshold = 1
  root.bucketized_split.left_id = 1
  root.bucketized_split.right_id = 2
  tree.nodes.add().leaf.scalar = 0.2
  tree.nodes.add().leaf.scalar = -0.4
  ensemble.tree_weights.extend([1.0, 1.0])
  paths = explanations.example_paths(ensemble.SerializeToString(),
                                     [np.array([[0], [3]], np.int32)])
  assert [ids for ids, _ in paths] == [[0], [0]]
  np.testing.assert_allclose([path for _, path in paths],
                             [[0.5, 0.7], [0.5, 0.1]], rtol=1e-6)


KERNELS = os.path.join(GOLDENS, "kernels")
GROW_CASES = ("grow_plain", "grow_regularized", "grow_pre_pruned",
              "grow_post_pruned")


def _kernel_case(name):
  return dict(np.load(os.path.join(KERNELS, f"{name}.npz")))


def test_bucketize_matches_the_kernel():
  case = _kernel_case("bucketize")
  values, boundaries = case["in/values"], case["in/boundaries"]
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    ours = session.run(features_lib.bucketize(
        [tf.constant(values)] * 2,
        [tf.constant(boundaries), tf.constant(boundaries[:1])]))
  np.testing.assert_array_equal(ours[0], case["out/buckets_0"])
  np.testing.assert_array_equal(ours[1], case["out/buckets_1"])


QUANTILE_CASES = ("quantiles_small", "quantiles_large", "quantiles_coarse",
                  "quantiles_duplicates")


@pytest.mark.parametrize("name", QUANTILE_CASES)
def test_quantile_sketch_matches_the_kernels(name):
  """Per batch MakeQuantileSummaries (recorded for the repeated values with
  uneven and zero weights), AddSummaries into the resource's stream, then
  Flush: the same summaries and boundaries as TF 2.8.4, bit for bit."""
  case = _kernel_case(name)
  epsilon = float(case["in/epsilon"])
  streams = quantiles.QuantileStreams(epsilon, 1)
  for index, (values, weights) in enumerate(zip(case["in/values"],
                                                case["in/weights"])):
    summary = quantiles.make_quantile_summaries([values], weights,
                                                epsilon)[0]
    if f"out/summary_{index}" in case:
      np.testing.assert_array_equal(summary, case[f"out/summary_{index}"])
    streams.add_summaries([summary])
  np.testing.assert_array_equal(
      streams.flush(int(case["in/num_quantiles"]))[0],
      case["out/boundaries"])


def test_cpp_sort_order_sorts_also_through_the_heap_fallback():
  rng = np.random.RandomState(3)
  for size in (0, 1, 5, 17, 40, 200):
    keys = rng.randint(0, 6, size=size).tolist()
    order = quantiles.cpp_sort_order(keys)
    assert sorted(order) == list(range(size))
    assert [keys[i] for i in order] == sorted(keys)
    items = list(range(size))
    quantiles._heap_sort(keys, items, 0, size)  # pylint: disable=protected-access
    assert [keys[i] for i in items] == sorted(keys)


@pytest.mark.parametrize("name", GROW_CASES)
def test_ensemble_logits_match_the_predict_kernel(name):
  """Every ensemble TF 2.8's kernels grew (bias, layers, pruning) predicts
  here what BoostedTreesPredict gave."""
  case = _kernel_case(name)
  features = list(case["in/features"])
  step = 1
  while f"out/step_{step}/predict" in case:
    serialized = case[f"out/step_{step - 1}/ensemble"].tobytes()
    np.testing.assert_allclose(
        inference.ensemble_logits(serialized, features, 1),
        case[f"out/step_{step}/predict"], rtol=1e-6, atol=1e-7,
        err_msg=f"{name} step {step}")
    step += 1
  assert step > 5


_SPLIT_KEYS = ("node_ids", "gains", "feature_ids", "dimension_ids",
               "thresholds", "left_node_contribs", "right_node_contribs",
               "split_types")
# What the multi-dimensional split solves for (a linear system per node).
_SOLVED_KEYS = ("gains", "left_node_contribs", "right_node_contribs")


@pytest.mark.parametrize("name", GROW_CASES)
def test_stats_and_best_splits_match_the_kernels(name):
  """aggregate_stats and calculate_best_feature_split_v2 give, bit for bit,
  what TF 2.8's kernels gave at every layer of the recorded growth runs."""
  case = _kernel_case(name)
  features, num_buckets = case["in/features"], case["in/num_buckets"]
  checked, step = 0, 0
  while f"out/step_{step}/logits" in case:
    prefix = f"out/step_{step}/"
    step += 1
    if prefix + "stats_0" not in case:  # a bias centering step
      continue
    gradients = case[prefix + "gradients"]
    for i, feature in enumerate(features):
      stats = kernels.aggregate_stats(
          case[prefix + "node_ids"], gradients, np.ones_like(gradients),
          feature, 7, int(num_buckets[i]))
      np.testing.assert_array_equal(stats, case[prefix + f"stats_{i}"])
      ours = kernels.calculate_best_feature_split_v2(
          case[prefix + "node_range"], [stats], [b"inequality"], [i],
          float(case["in/l1"]), float(case["in/l2"]),
          float(case["in/tree_complexity"]),
          float(case["in/min_node_weight"]))
      for key, value in zip(_SPLIT_KEYS, ours):
        expected = case[prefix + f"split_{i}_{key}"]
        np.testing.assert_array_equal(value.reshape(expected.shape),
                                      expected, err_msg=f"{step} {key}")
      checked += 1
  assert checked >= 12


@pytest.mark.parametrize("name", GROW_CASES)
def test_ensemble_kernels_grow_what_tf_2_8_grew(name):
  """training_predict (also from the previous step's cached nodes),
  the ensemble states, center_bias and update_ensemble_v2 replay the
  recorded growth: the same logits, node ids, states and centering flags,
  and after every step the same serialized ensemble, byte for byte."""
  case = _kernel_case(name)
  features = list(case["in/features"])
  pruning = {b"none": kernels.NO_PRUNING, b"pre": kernels.PRE_PRUNING,
             b"post": kernels.POST_PRUNING}[
      case["in/pruning_mode"].astype(np.bytes_).item()]
  ensemble, step, checked_cache = kernels.Ensemble(), 0, 0
  previous = (None, None)  # Step 0 has no cache to continue from.
  while f"out/step_{step}/logits" in case:
    prefix = f"out/step_{step}/"
    logits, tree_ids, node_ids = kernels.training_predict(ensemble, features)
    np.testing.assert_array_equal(logits, case[prefix + "logits"])
    np.testing.assert_array_equal(tree_ids, case[prefix + "tree_ids"])
    np.testing.assert_array_equal(node_ids, case[prefix + "node_ids"])
    if prefix + "from_cache_logits" in case:
      # Continuing from the previous step's trees and nodes (the in-memory
      # trainer's cache), post-pruning corrections included.
      cached = kernels.training_predict(ensemble, features, *previous)
      for key, value in zip(("logits", "tree_ids", "node_ids"), cached):
        np.testing.assert_array_equal(
            value, case[prefix + f"from_cache_{key}"], err_msg=f"{step}")
      checked_cache += 1
    previous = (tree_ids, node_ids)
    states = ensemble.states()
    assert list(states[:4]) == case[prefix + "states"].tolist(), step
    assert states[4] == case[prefix + "node_range"].tolist(), step
    gradients = case[prefix + "gradients"]
    if prefix + "centering" in case:
      assert kernels.center_bias(
          ensemble, gradients.mean(0)[0], 1.0, float(case["in/l1"]),
          float(case["in/l2"])) == bool(case[prefix + "centering"])
    else:
      kernels.update_ensemble_v2(
          ensemble, learning_rate=float(case["in/learning_rate"]),
          max_depth=int(case["in/max_depth"]), pruning_mode=pruning,
          **{key: [case[prefix + f"split_{i}_{key}"]
                   for i in range(len(features))] for key in _SPLIT_KEYS})
    assert (ensemble.message.SerializeToString()
            == case[prefix + "ensemble"].tobytes()), step
    step += 1
  assert step >= 7 and checked_cache == step - 1


@pytest.mark.parametrize("name", ("grow_multi_dim", "grow_multi_dim_l2"))
def test_multi_dimensional_kernels_grow_what_tf_2_8_grew(name):
  """Three classes' softmax gradients and full hessians, without L2 (a
  singular hessian: the QR's basic solution) and with: aggregate_stats,
  calculate_best_feature_split_v2, training_predict and
  update_ensemble_v2 give TF 2.8's stats, logits and serialized ensembles
  bit for bit at every step, and its gains and vector contributions to
  within float32 rounding (the solve's last bits follow the CPU; without
  L2, up to a shift of all classes alike)."""
  case = _kernel_case(name)
  features, num_buckets = list(case["in/features"]), case["in/num_buckets"]
  width = int(case["in/classes"])
  ensemble, step = kernels.Ensemble(logits_dimension=width), 0
  while f"out/step_{step}/logits" in case:
    prefix = f"out/step_{step}/"
    for key, value in zip(("logits", "tree_ids", "node_ids"),
                          kernels.training_predict(ensemble, features)):
      np.testing.assert_array_equal(value, case[prefix + key],
                                    err_msg=f"{step} {key}")
    assert list(ensemble.states()[:4]) == case[prefix + "states"].tolist()
    splits = {key: [] for key in _SPLIT_KEYS}
    for i, feature in enumerate(features):
      stats = kernels.aggregate_stats(
          case[prefix + "node_ids"], case[prefix + "gradients"],
          case[prefix + "hessians"], feature, 7, int(num_buckets[i]))
      np.testing.assert_array_equal(stats, case[prefix + f"stats_{i}"])
      ours = kernels.calculate_best_feature_split_v2(
          case[prefix + "node_range"], [stats], [b"inequality"], [i], 0.0,
          float(case["in/l2"]), 0.0, 0.0, width)
      for key, value in zip(_SPLIT_KEYS, ours):
        expected = case[prefix + f"split_{i}_{key}"]
        if key in _SOLVED_KEYS:
          # Eigen's solve rounds by the CPU's vector width (AVX-512 moves
          # the last bits), and without L2 the softmax hessian is singular:
          # its basic solution may differ by a shift of every class alike
          # (the same probabilities). The next step starts from TF 2.8's.
          value = value.reshape(expected.shape)
          if key != "gains" and float(case["in/l2"]) == 0.0:
            value = value - (value - expected)[..., :1]
          np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6,
                                     err_msg=f"{step} {key}")
        else:
          np.testing.assert_array_equal(value.reshape(expected.shape),
                                        expected, err_msg=f"{step} {key}")
        splits[key].append(expected)
    kernels.update_ensemble_v2(
        ensemble, learning_rate=float(case["in/learning_rate"]),
        max_depth=int(case["in/max_depth"]),
        pruning_mode=kernels.NO_PRUNING, **splits)
    assert (ensemble.message.SerializeToString()
            == case[prefix + "ensemble"].tobytes()), step
    step += 1
  assert step == 7


_NOISE_GAIN = 1e-6


def _is_noise_split(node) -> bool:
  """A split whose gain is float noise: every example of the node had the
  same gradient, so any split gains ~0 and which one wins is decided by
  the last bits of the gradients (TF 2.21's exp is not TF 2.8's)."""
  return ("bucketized_split" in node
          and abs(node.get("metadata", {}).get("gain", 0.0)) < _NOISE_GAIN)


def _assert_tree_close(actual, expected, where):
  """A tree: a noise split need only be one, and its two leaves (an empty
  side and the node's examples, in either order) hold the same values."""
  assert len(actual["nodes"]) == len(expected["nodes"]), where
  skip = set()
  for index, (ours, theirs) in enumerate(zip(actual["nodes"],
                                             expected["nodes"])):
    if index in skip:
      continue
    if _is_noise_split(theirs):
      assert _is_noise_split(ours), f"{where}.nodes[{index}]"
      ids = [theirs["bucketized_split"].get(k, 0)
             for k in ("left_id", "right_id")]
      assert [ours["bucketized_split"].get(k, 0)
              for k in ("left_id", "right_id")] == ids
      values = [sorted(tree["nodes"][i]["leaf"].get("scalar", 0.0)
                       for i in ids) for tree in (actual, expected)]
      np.testing.assert_allclose(values[0], values[1], rtol=1e-5,
                                 atol=1e-6, err_msg=f"{where}[{index}]")
      skip.update(ids)
      continue
    _assert_nested_close(ours, theirs, f"{where}.nodes[{index}]")


def _assert_nested_close(actual, expected, where="trees"):
  """Equal structure; floats to rtol 1e-5 (TF 2.21's logistic and
  accumulator means differ from TF 2.8's in the last bits), and for a
  noise split (`_is_noise_split`) only that it is one."""
  if isinstance(expected, dict) and "nodes" in expected:
    _assert_tree_close(actual, expected, where)
    return
  if isinstance(expected, dict):
    assert sorted(actual) == sorted(expected), where
    for key in expected:
      _assert_nested_close(actual[key], expected[key], f"{where}.{key}")
  elif isinstance(expected, list):
    assert len(actual) == len(expected), where
    for index, (a, e) in enumerate(zip(actual, expected)):
      _assert_nested_close(a, e, f"{where}[{index}]")
  elif isinstance(expected, float):
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6,
                               err_msg=where)
  else:
    assert actual == expected, where


# Without L2 the softmax hessian is singular: the QR leaves one class's
# unknown at 0, and which one can follow the last bits of the gradients
# (TF 2.21's exp is not TF 2.8's). Leaves that differ by the same amount
# in every class give the same probabilities; these goldens compare the
# leaves less their mean (the metrics and predictions are compared as
# they are).
SOFTMAX_SHIFT_INVARIANT = ("boosted_trees_multiclass",)


def _centered_vectors(value):
  """`value` with every vector leaf less its mean."""
  if isinstance(value, dict):
    if set(value) == {"value"} and isinstance(value["value"], list):
      mean = float(np.mean(value["value"], dtype=np.float64))
      return {"value": [float(v) - mean for v in value["value"]]}
    return {k: _centered_vectors(v) for k, v in value.items()}
  if isinstance(value, list):
    return [_centered_vectors(v) for v in value]
  return value


@pytest.mark.parametrize("name", ("boosted_trees_bucketized",
                                  "boosted_trees_bucketized_regressor",
                                  "boosted_trees_classifier",
                                  "boosted_trees_regressor",
                                  "boosted_trees_weighted",
                                  "boosted_trees_in_memory",
                                  "boosted_trees_estimator",
                                  "boosted_trees_multiclass",
                                  "boosted_trees_multi_label"))
def test_training_replays_the_2_8_run(name, engine_name, tmp_path):
  """The classifier (bias centering) and the regressor (L1/L2,
  pre-pruning) on bucketized and indicator columns, trained here from the
  2.8 run's model.ckpt-0 on TF 2.21: the same steps, model_dir, checkpoint
  keys, trees, metrics, predictions, importances and explanations as
  tensorflow-estimator 2.8 on TF 2.8.4."""
  program_lib.tensorflow_with_estimator()
  folder = os.path.join(GOLDENS, name)
  results, variables = _golden(name)
  if engine_name == "function":
    with pytest.raises(NeedsGraphEngine, match="graph engine"):
      golden_recorder.run_program(name, str(tmp_path / "model"),
                                  start_checkpoint_dir=os.path.join(
                                      folder, "ckpt0"))
    return
  run = golden_recorder.run_program(
      name, str(tmp_path / "model"),
      start_checkpoint_dir=os.path.join(folder, "ckpt0"))
  ours = run["results"]
  for key in ("model_dir_layout", "latest_checkpoint", "variables"):
    assert ours[key] == results[key], key
  for key, expected in variables.items():
    if key == "boosted_trees:0_serialized":
      continue
    if key.endswith("logits_cache"):
      # Sums of the leaves: their last bits follow TF's exp (see below).
      np.testing.assert_allclose(run["variables"][key], expected, rtol=1e-5,
                                 atol=1e-6, err_msg=key)
      continue
    np.testing.assert_array_equal(run["variables"][key], expected, key)
  trees = [data.decoded_trees(run["variables"]["boosted_trees:0_serialized"]),
           data.decoded_trees(variables["boosted_trees:0_serialized"].item())]
  if name in SOFTMAX_SHIFT_INVARIANT:
    trees = [_centered_vectors(t) for t in trees]
  _assert_nested_close(*trees)
  _assert_nested_close(ours["eval_metrics"], results["eval_metrics"],
                       "metrics")
  observed = dict(ours["observations"])
  expected_observations = dict(results["observations"])
  if name in SOFTMAX_SHIFT_INVARIANT:
    for observations in (observed, expected_observations):
      observations["trees"] = _centered_vectors(observations["trees"])
  # A noise split credits its (equal) change to whichever feature won it:
  # per example the bias, the probability and the sum of the contributions
  # are compared (test_explanations_match_the_recorded_ones checks the
  # contributions themselves on 2.8's own trees).
  for (bias, contributions, probability), (e_bias, e_contributions,
                                           e_probability) in zip(
      observed.pop("explanations", []),
      expected_observations.pop("explanations", [])):
    np.testing.assert_allclose([bias, probability], [e_bias, e_probability],
                               rtol=1e-5)
    np.testing.assert_allclose(sum(v for _, v in contributions),
                               sum(v for _, v in e_contributions),
                               rtol=1e-4, atol=1e-6)
  _assert_nested_close(observed, expected_observations, "observations")
  predictions = dict(np.load(os.path.join(folder, "predictions.npz")))
  assert sorted(run["predictions"]) == sorted(predictions)
  for key, expected in predictions.items():
    if expected.dtype.kind == "S":
      np.testing.assert_array_equal(
          np.asarray(run["predictions"][key]).astype(np.bytes_), expected)
    else:
      ours = np.asarray(run["predictions"][key])
      if name in SOFTMAX_SHIFT_INVARIANT and key == "logits":
        ours = ours - ours.mean(axis=-1, keepdims=True)
        expected = expected - expected.mean(axis=-1, keepdims=True)
      np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6,
                                 err_msg=key)


@pytest.mark.parametrize("n_batches, tf_config, error, match", [
    (2, None, AssertionError, "n_batches_per_layer should be set as 1"),
    (1, {"cluster": {"chief": ["localhost:1"], "worker": ["localhost:2"]},
         "task": {"type": "chief", "index": 0}}, ValueError,
     "supported only for non-distributed"),
])
def test_train_in_memory_refuses_what_2_8_refused(n_batches, tf_config,
                                                  error, match, tmp_path,
                                                  monkeypatch):
  """2.8's errors (its type and wording first), before any checkpoint."""
  if tf_config:
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
  estimator = estimators.BoostedTreesClassifier(
      data.bucketized_columns(tf.feature_column),
      n_batches_per_layer=n_batches, model_dir=str(tmp_path / "model"),
      n_trees=1, max_depth=1, train_in_memory=True,
      config=run_config_lib.RunConfig(engine="graph"))
  with pytest.raises(error, match=match):
    estimator.train(data.input_fns(data.BINARY)[0], max_steps=2)
  assert not os.path.exists(str(tmp_path / "model" / "checkpoint"))


def test_boosted_trees_estimator_is_exported_as_in_2_8():
  """tf.estimator.BoostedTreesEstimator in both namespaces, as 2.8 had it."""
  import estimator_compat  # pylint: disable=g-import-not-at-top
  from estimator_compat import v1  # pylint: disable=g-import-not-at-top
  assert (estimator_compat.BoostedTreesEstimator
          is v1.BoostedTreesEstimator is estimators.BoostedTreesEstimator)


def test_center_bias_with_a_two_dimensional_head_fails_as_in_2_8(tmp_path):
  """2.8's graph failed to stack 2 gradients with 4 hessian entries: the
  same ValueError, at train(), before any checkpoint."""
  from estimator_compat.head import regression_head  # pylint: disable=g-import-not-at-top
  estimator = estimators.BoostedTreesEstimator(
      data.bucketized_columns(tf.feature_column), n_batches_per_layer=1,
      head=regression_head.RegressionHead(label_dimension=2),
      model_dir=str(tmp_path / "model"), n_trees=1, max_depth=1,
      center_bias=True, config=run_config_lib.RunConfig(engine="graph"))

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        (data.FEATURES, np.concatenate([data.TARGET] * 2, 1))).batch(10)

  with pytest.raises(ValueError, match="but are 2 and 4"):
    estimator.train(input_fn, max_steps=1)
  assert not os.path.exists(str(tmp_path / "model" / "checkpoint"))


def test_explanations_refuse_multi_dimensional_logits(tmp_path):
  estimator = estimators.BoostedTreesEstimator(
      data.bucketized_columns(tf.feature_column), n_batches_per_layer=1,
      head=heads.regression_head(2), model_dir=str(tmp_path / "model"),
      center_bias=True)
  with pytest.raises(ValueError, match="does not yet support multi-class"):
    next(estimator.experimental_predict_with_explanations(
        lambda: ({}, None)))


def test_multi_class_with_a_weight_column_fails_as_in_2_8(tmp_path):
  """2.8's maximum entropy loss multiplied by the weight column's name: its
  TypeError, at train(), before any checkpoint."""
  estimator = estimators.BoostedTreesClassifier(
      data.bucketized_columns(tf.feature_column), n_batches_per_layer=1,
      n_classes=3, weight_column="w", model_dir=str(tmp_path / "model"),
      n_trees=1, max_depth=1, config=run_config_lib.RunConfig(engine="graph"))
  features = dict(data.FEATURES, w=np.ones([data.N, 1], np.float32))

  def input_fn():
    return tf.data.Dataset.from_tensor_slices(
        (features, data.BINARY)).batch(10)

  with pytest.raises(TypeError, match="got 'w' of type 'str'"):
    estimator.train(input_fn, max_steps=1)
  assert not os.path.exists(str(tmp_path / "model" / "checkpoint"))
