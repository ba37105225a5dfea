"""Records TF 2.8's BoostedTrees kernels on small inputs (inputs + outputs).

TF 2.12-2.21 register no kernel for the BoostedTrees ops, so what the
library computes in their place is checked against these records
(tests/boosted_trees_goldens/kernels/*.npz). Runs in the TF 2.8.4 venv of
tools/record_boosted_trees_goldens.sh:

  ~/.cache/estimator-compat/tf28-venv/bin/python \
      tools/record_boosted_trees_kernels.py tests/boosted_trees_goldens/kernels

Each case is one .npz: `in/<name>` inputs and attributes, `out/<name>`
outputs; ensembles are serialized TreeEnsemble messages, as uint8 arrays.
"""

import os
import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import boosted_trees_ops
from tensorflow.python.ops import gen_boosted_trees_ops

BATCH, MAX_DEPTH = 24, 3


def _array(value):
  """A plain array: strings as bytes (no pickled object arrays)."""
  array = np.asarray(value)
  return array.astype(np.bytes_) if array.dtype == object else array


def _save(out_dir, name, inputs, outputs):
  arrays = {f"in/{k}": _array(v) for k, v in inputs.items()}
  arrays.update({f"out/{k}": _array(v) for k, v in outputs.items()})
  np.savez(os.path.join(out_dir, f"{name}.npz"), **arrays)


def bucketize(out_dir, rng):
  values = rng.normal(size=[BATCH]).astype(np.float32)
  values[:3] = [-5.0, 5.0, 0.25]
  boundaries = np.array([-1.0, -0.25, 0.25, 1.0], np.float32)
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    buckets = session.run(boosted_trees_ops.boosted_trees_bucketize(
        [values, values], [boundaries, boundaries[:1]]))
  _save(out_dir, "bucketize",
        {"values": values, "boundaries": boundaries},
        {"buckets_0": buckets[0], "buckets_1": buckets[1]})


def _features(rng, num_buckets):
  return [rng.randint(0, size, size=[BATCH, 1]).astype(np.int32)
          for size in num_buckets]


def grow(out_dir, rng, name, pruning_mode, l1, l2, tree_complexity,
         min_node_weight, center_bias):
  """A few layers grown from random gradients: every kernel's inputs and
  outputs along the way, and the ensemble after each step."""
  num_buckets = [4, 4, 6]
  features = _features(rng, num_buckets)
  labels = rng.normal(size=[BATCH, 1]).astype(np.float32)
  inputs = {"features": np.stack(features), "labels": labels,
            "num_buckets": num_buckets, "l1": l1, "l2": l2,
            "tree_complexity": tree_complexity,
            "min_node_weight": min_node_weight, "pruning_mode": pruning_mode,
            "learning_rate": 0.3, "max_depth": MAX_DEPTH,
            "center_bias": center_bias}
  outputs = {}
  max_splits = (1 << MAX_DEPTH) - 1
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    ensemble = boosted_trees_ops.TreeEnsemble("ensemble")
    session.run(ensemble.initializer)
    node_ids_in = tf.compat.v1.placeholder(tf.int32, [BATCH])
    cached_tree = tf.compat.v1.placeholder(tf.int32, [BATCH])
    cached_node = tf.compat.v1.placeholder(tf.int32, [BATCH])
    train_pred = boosted_trees_ops.training_predict(
        ensemble.resource_handle, cached_tree, cached_node, features, 1)
    predict = boosted_trees_ops.predict(ensemble.resource_handle, features, 1)
    states = ensemble.get_states()
    grads_in = tf.compat.v1.placeholder(tf.float32, [BATCH, 1])
    hess_in = tf.compat.v1.placeholder(tf.float32, [BATCH, 1])
    summaries = [[gen_boosted_trees_ops.boosted_trees_aggregate_stats(
        node_ids_in, grads_in, hess_in, f, max_splits, size)]
                 for f, size in zip(features, num_buckets)]
    range_in = tf.compat.v1.placeholder(tf.int32, [2])
    splits = [boosted_trees_ops.calculate_best_feature_split_v2(
        range_in, s, split_types=["inequality"], candidate_feature_ids=[i],
        l1=l1, l2=l2, tree_complexity=tree_complexity,
        min_node_weight=min_node_weight, logits_dimension=1)
              for i, s in enumerate(summaries)]
    split_in = {k: [tf.compat.v1.placeholder(d) for _ in features]
                for k, d in (("node_ids", tf.int32), ("gains", tf.float32),
                             ("feature_ids", tf.int32),
                             ("dimension_ids", tf.int32),
                             ("thresholds", tf.int32),
                             ("left_node_contribs", tf.float32),
                             ("right_node_contribs", tf.float32),
                             ("split_types", tf.string))}
    update = boosted_trees_ops.update_ensemble_v2(
        ensemble.resource_handle, learning_rate=0.3, max_depth=MAX_DEPTH,
        pruning_mode=boosted_trees_ops.PruningMode.from_str(pruning_mode),
        logits_dimension=1, **split_in)
    mean_g = tf.compat.v1.placeholder(tf.float32, [1, 1])
    mean_h = tf.compat.v1.placeholder(tf.float32, [1, 1])
    center = boosted_trees_ops.center_bias(ensemble.resource_handle, mean_g,
                                           mean_h, l1=l1, l2=l2)
    serialize = ensemble.serialize()
    step, centering = 0, center_bias
    previous = None
    while step < 12:
      zeros = np.zeros([BATCH], np.int32)
      logits, tree_ids, node_ids = session.run(train_pred, {
          cached_tree: zeros, cached_node: zeros - 1})
      (stamp, num_trees, finalized, attempted,
       node_range) = session.run(states)
      gradients = (logits - labels).astype(np.float32)
      hessians = np.ones_like(gradients)
      record = {"logits": logits, "tree_ids": tree_ids, "node_ids": node_ids,
                "states": [stamp, num_trees, finalized, attempted],
                "node_range": node_range, "gradients": gradients,
                "predict": session.run(predict)}
      if previous is not None:
        # From the previous step's trees and nodes, as the in-memory
        # trainer's cache continues (post-pruning corrections included).
        cached = session.run(train_pred, {cached_tree: previous[0],
                                          cached_node: previous[1]})
        for key, value in zip(("logits", "tree_ids", "node_ids"), cached):
          record[f"from_cache_{key}"] = value
      previous = (tree_ids, node_ids)
      if centering:
        record["centering"] = session.run(center, {
            mean_g: gradients.mean(0, keepdims=True),
            mean_h: hessians.mean(0, keepdims=True)})
        centering = bool(record["centering"])
      else:
        stats = session.run(summaries, {node_ids_in: node_ids,
                                        grads_in: gradients,
                                        hess_in: hessians})
        best = session.run(splits, {range_in: node_range,
                                    node_ids_in: node_ids,
                                    grads_in: gradients,
                                    hess_in: hessians})
        for i, summary in enumerate(stats):
          record[f"stats_{i}"] = summary[0]
        keys = ("node_ids", "gains", "feature_ids", "dimension_ids",
                "thresholds", "left_node_contribs", "right_node_contribs",
                "split_types")
        feed = {}
        for i, result in enumerate(best):
          for key, value in zip(keys, result):
            feed[split_in[key][i]] = value
            record[f"split_{i}_{key}"] = value
        session.run(update, feed)
      # As bytes (uint8): numpy's fixed-width strings drop trailing NULs.
      record["ensemble"] = np.frombuffer(session.run(serialize)[1],
                                         np.uint8)
      for key, value in record.items():
        outputs[f"step_{step}/{key}"] = value
      step += 1
      if finalized >= 2:
        break
  _save(out_dir, name, inputs, outputs)


def grow_multi_dim(out_dir, rng, name, l2, classes=3, steps=7):
  """Layers grown from softmax gradients and full hessians of 3 classes
  (logits_dimension=3): every kernel's inputs and outputs, and the
  ensemble after each step."""
  num_buckets = [4, 4, 6]
  features = _features(rng, num_buckets)
  labels = rng.randint(0, classes, size=[BATCH])
  inputs = {"features": np.stack(features), "labels": labels,
            "num_buckets": num_buckets, "l2": l2, "learning_rate": 0.3,
            "max_depth": MAX_DEPTH, "classes": classes}
  outputs = {}
  max_splits = (1 << MAX_DEPTH) - 1
  width = classes + classes * classes
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    ensemble = boosted_trees_ops.TreeEnsemble("ensemble")
    session.run(ensemble.initializer)
    zeros = np.zeros([BATCH], np.int32)
    train_pred = boosted_trees_ops.training_predict(
        ensemble.resource_handle, zeros, zeros - 1, features, classes)
    states = ensemble.get_states()
    node_ids_in = tf.compat.v1.placeholder(tf.int32, [BATCH])
    grads_in = tf.compat.v1.placeholder(tf.float32, [BATCH, classes])
    hess_in = tf.compat.v1.placeholder(tf.float32, [BATCH, classes ** 2])
    summaries = [gen_boosted_trees_ops.boosted_trees_aggregate_stats(
        node_ids_in, grads_in, hess_in, f, max_splits, size)
                 for f, size in zip(features, num_buckets)]
    range_in = tf.compat.v1.placeholder(tf.int32, [2])
    stats_in = [tf.compat.v1.placeholder(tf.float32,
                                         [max_splits, 1, size + 1, width])
                for size in num_buckets]
    splits = [boosted_trees_ops.calculate_best_feature_split_v2(
        range_in, [s], split_types=["inequality"], candidate_feature_ids=[i],
        l1=0.0, l2=l2, tree_complexity=0.0, min_node_weight=0.0,
        logits_dimension=classes) for i, s in enumerate(stats_in)]
    split_in = {k: [tf.compat.v1.placeholder(d) for _ in features]
                for k, d in (("node_ids", tf.int32), ("gains", tf.float32),
                             ("feature_ids", tf.int32),
                             ("dimension_ids", tf.int32),
                             ("thresholds", tf.int32),
                             ("left_node_contribs", tf.float32),
                             ("right_node_contribs", tf.float32),
                             ("split_types", tf.string))}
    update = boosted_trees_ops.update_ensemble_v2(
        ensemble.resource_handle, learning_rate=0.3, max_depth=MAX_DEPTH,
        pruning_mode=boosted_trees_ops.PruningMode.NO_PRUNING,
        logits_dimension=classes, **split_in)
    serialize = ensemble.serialize()
    one_hot = np.eye(classes, dtype=np.float32)[labels]
    for step in range(steps):
      logits, tree_ids, node_ids = session.run(train_pred)
      (stamp, num_trees, finalized, attempted,
       node_range) = session.run(states)
      exps = np.exp(logits.astype(np.float64))
      p = exps / exps.sum(1, keepdims=True)
      gradients = (p - one_hot).astype(np.float32)
      hessians = np.stack([np.diag(q) - np.outer(q, q) for q in p]).reshape(
          BATCH, -1).astype(np.float32)
      record = {"logits": logits, "tree_ids": tree_ids, "node_ids": node_ids,
                "states": [stamp, num_trees, finalized, attempted],
                "node_range": node_range, "gradients": gradients,
                "hessians": hessians}
      stats = session.run(summaries, {node_ids_in: node_ids,
                                      grads_in: gradients,
                                      hess_in: hessians})
      best = session.run(splits, {range_in: node_range,
                                  **dict(zip(stats_in, stats))})
      keys = ("node_ids", "gains", "feature_ids", "dimension_ids",
              "thresholds", "left_node_contribs", "right_node_contribs",
              "split_types")
      feed = {}
      for i, (summary, result) in enumerate(zip(stats, best)):
        record[f"stats_{i}"] = summary
        for key, value in zip(keys, result):
          feed[split_in[key][i]] = value
          record[f"split_{i}_{key}"] = value
      session.run(update, feed)
      record["ensemble"] = np.frombuffer(session.run(serialize)[1],
                                         np.uint8)
      for key, value in record.items():
        outputs[f"step_{step}/{key}"] = value
  _save(out_dir, name, inputs, outputs)


def quantiles(out_dir, rng, name, epsilon, num_quantiles, batches, size):
  values = [rng.exponential(size=[size]).astype(np.float32)
            for _ in range(batches)]
  weights = [rng.uniform(0.5, 2.0, size=[size]).astype(np.float32)
             for _ in range(batches)]
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    accumulator = boosted_trees_ops.QuantileAccumulator(
        epsilon=epsilon, num_streams=1, num_quantiles=num_quantiles,
        name="q")
    session.run(accumulator.initializer)
    value_in = tf.compat.v1.placeholder(tf.float32, [size])
    weight_in = tf.compat.v1.placeholder(tf.float32, [size])
    add = accumulator.add_summaries([value_in], weight_in)
    for v, w in zip(values, weights):
      session.run(add, {value_in: v, weight_in: w})
    session.run(accumulator.flush())
    boundaries = session.run(accumulator.get_bucket_boundaries())[0]
  _save(out_dir, name, {"values": np.stack(values),
                        "weights": np.stack(weights), "epsilon": epsilon,
                        "num_quantiles": num_quantiles},
        {"boundaries": boundaries})


def quantiles_with_duplicates(out_dir, rng, name, epsilon, num_quantiles,
                              batches, size):
  """Repeated values, uneven and zero weights: each batch's summary
  (BoostedTreesMakeQuantileSummaries) and the flushed boundaries."""
  values = [(rng.randint(0, 15, size=[size]) / 4.0).astype(np.float32)
            for _ in range(batches)]
  weights = [rng.uniform(0.0, 2.0, size=[size]).astype(np.float32)
             for _ in range(batches)]
  for w in weights:
    w[::7] = 0.0
  outputs = {}
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    accumulator = boosted_trees_ops.QuantileAccumulator(
        epsilon=epsilon, num_streams=1, num_quantiles=num_quantiles,
        name="q")
    session.run(accumulator.initializer)
    value_in = tf.compat.v1.placeholder(tf.float32, [size])
    weight_in = tf.compat.v1.placeholder(tf.float32, [size])
    summaries = boosted_trees_ops.make_quantile_summaries(
        [value_in], weight_in, epsilon)
    add = boosted_trees_ops.quantile_add_summaries(
        accumulator.resource_handle, summaries)
    for index, (v, w) in enumerate(zip(values, weights)):
      outputs[f"summary_{index}"] = session.run(
          [summaries[0], add], {value_in: v, weight_in: w})[0]
    session.run(accumulator.flush())
    outputs["boundaries"] = session.run(
        accumulator.get_bucket_boundaries())[0]
  _save(out_dir, name, {"values": np.stack(values),
                        "weights": np.stack(weights), "epsilon": epsilon,
                        "num_quantiles": num_quantiles}, outputs)


def main(out_dir):
  os.makedirs(out_dir, exist_ok=True)
  rng = np.random.RandomState(7)
  bucketize(out_dir, rng)
  grow(out_dir, rng, "grow_plain", "none", 0.0, 0.0, 0.0, 0.0, False)
  grow(out_dir, rng, "grow_regularized", "none", 0.05, 0.5, 0.0, 0.2, True)
  grow(out_dir, rng, "grow_pre_pruned", "pre", 0.0, 0.1, 0.4, 0.0, False)
  grow(out_dir, rng, "grow_post_pruned", "post", 0.0, 0.1, 0.4, 0.0, True)
  quantiles(out_dir, rng, "quantiles_small", 0.1, 10, 2, 10)
  quantiles(out_dir, rng, "quantiles_large", 0.01, 100, 4, 500)
  quantiles(out_dir, rng, "quantiles_coarse", 0.25, 4, 3, 200)
  quantiles_with_duplicates(out_dir, rng, "quantiles_duplicates", 0.1, 10,
                            3, 60)
  grow_multi_dim(out_dir, rng, "grow_multi_dim", 0.0)
  grow_multi_dim(out_dir, rng, "grow_multi_dim_l2", 0.1)
  print(f"recorded kernels -> {out_dir}")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1]))
