"""The BoostedTrees graph ops (graph_kernels.py) against kernels.py directly.

Each op is a `py_func` around a NumPy kernel: run in a session, it must give
what the kernel gives on the same values (the ensemble's bytes and stamp,
the logits, the stats, the splits, the quantile boundaries), with the static
shapes the graph promises. The session runs every op on the calling thread
(inter_op_parallelism_threads=-1), so the py_func bodies run in order and
where coverage measures them.
"""

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import resources

from estimator_compat.canned.boosted_trees import graph_kernels
from estimator_compat.canned.boosted_trees import kernels
from estimator_compat.canned.boosted_trees import quantiles

BUCKETS = np.array([0, 1, 2, 3, 0, 1, 2, 3], np.int32)
GRADIENTS = np.array([[-1.0], [-0.5], [0.5], [1.0], [-0.8], [-0.2], [0.4],
                      [0.9]], np.float32)
HESSIANS = np.full([8, 1], 0.5, np.float32)
SPLIT_KEYS = ("node_ids", "gains", "feature_ids", "dimension_ids",
              "thresholds", "left_node_contribs", "right_node_contribs",
              "split_types")


def _session(graph):
  return tf.compat.v1.Session(graph=graph, config=tf.compat.v1.ConfigProto(
      inter_op_parallelism_threads=-1))


def test_ensemble_ops_match_the_kernels_step_by_step():
  graph = tf.Graph()
  with graph.as_default():
    state = graph_kernels.EnsembleState("boosted_trees/")
    init = resources.initialize_resources(resources.shared_resources())
    states = state.get_states()
    center, keep = state.center_bias(tf.constant([[-0.1]]),
                                     tf.constant([[0.5]]), 0.0, 1.0)
    feature = tf.constant(BUCKETS)
    predicted = state.training_predict([feature])
    cached = state.training_predict([feature], tf.zeros([8], tf.int32),
                                    tf.zeros([8], tf.int32))
    nodes = tf.compat.v1.placeholder(tf.int32, [8])
    stats = graph_kernels.aggregate_stats(nodes, GRADIENTS, HESSIANS,
                                          BUCKETS.reshape(8, 1),
                                          max_splits=2, num_buckets=4)
    split = graph_kernels.calculate_best_feature_split_v2(
        states[4], [stats], ["inequality"], [0], 0.0, 1.0, 0.0, 0.0)
    grow = state.update({key: [value] for key, value in zip(SPLIT_KEYS,
                                                            split)},
                        learning_rate=0.1, max_depth=1, pruning_mode=0)
  assert stats.shape.as_list() == [2, 1, 5, 2]
  assert [s.shape.as_list() for s in states] == [[], [], [], [], [2]]
  reference = kernels.Ensemble()

  def same_ensemble(session):
    serialized, stamp = session.run([state.serialized, state.stamp])
    assert serialized == reference.message.SerializeToString()
    assert stamp == reference.stamp

  with _session(graph) as session:
    session.run(init)
    got = session.run(states)
    assert got[:4] == list(reference.states()[:4]) == [0, 0, 0, 0]
    assert list(got[4]) == reference.states()[4] == [0, 1]

    _, keep_centering = session.run([center, keep])
    assert keep_centering == kernels.center_bias(reference, -0.1, 0.5, 0.0,
                                                 1.0)
    same_ensemble(session)

    logits, tree_ids, node_ids = session.run(predicted)
    expected = kernels.training_predict(reference, [BUCKETS])
    for ours, theirs in zip((logits, tree_ids, node_ids), expected):
      np.testing.assert_array_equal(ours, np.reshape(theirs, ours.shape))
    assert logits.shape == (8, 1) and tree_ids.shape == node_ids.shape == (8,)
    assert np.all(logits == logits[0]) and logits[0, 0] != 0  # the bias
    cached_logits = session.run(cached)[0]
    np.testing.assert_array_equal(
        cached_logits, kernels.training_predict(
            reference, [BUCKETS], np.zeros([8], np.int32),
            np.zeros([8], np.int32))[0].reshape(8, 1))

    got_stats = session.run(stats, {nodes: node_ids})
    np.testing.assert_array_equal(got_stats, kernels.aggregate_stats(
        node_ids, GRADIENTS, HESSIANS, BUCKETS, 2, 4))
    got_split = session.run(split, {nodes: node_ids})
    expected_split = kernels.calculate_best_feature_split_v2(
        [0, 1], [got_stats], [b"inequality"], [0], 0.0, 1.0, 0.0, 0.0)
    for ours, theirs in zip(got_split, expected_split):
      np.testing.assert_array_equal(ours, theirs)
    assert list(got_split[0]) == [0]  # the root splits

    session.run(grow, {nodes: node_ids})
    kernels.update_ensemble_v2(
        reference, **{key: [value] for key, value in zip(SPLIT_KEYS,
                                                         got_split)},
        learning_rate=0.1, max_depth=1, pruning_mode=0)
    same_ensemble(session)
    got = session.run(states)
    assert got[:4] == list(reference.states()[:4])
    assert got[1] == 2  # the bias tree and the finalized one-split tree


def test_quantile_ops_match_the_streams():
  values = np.linspace(-2.0, 5.0, 40).astype(np.float32)
  graph = tf.Graph()
  with graph.as_default():
    accumulator = graph_kernels.QuantileAccumulator(
        "boosted_trees/", "quantile_accumulator", epsilon=0.01,
        num_streams=1, num_quantiles=4)
    init = resources.initialize_resources(resources.shared_resources())
    add = accumulator.add_summaries([tf.constant(values)],
                                    tf.constant([1.0]))
    flush = accumulator.flush()
    (boundaries,) = accumulator.bucket_boundaries()
  streams = quantiles.QuantileStreams(0.01, 1)
  streams.add_summaries(quantiles.make_quantile_summaries([values], [1.0],
                                                          0.01))
  (expected,) = streams.flush(4)
  with _session(graph) as session:
    session.run(init)
    assert session.run(boundaries).shape == (0,)  # until the first flush
    session.run(add)
    session.run(flush)
    got = session.run(boundaries)
  np.testing.assert_array_equal(got, expected)
  assert got[0] == values[0] and got[-1] == values[-1] and len(got) > 2
