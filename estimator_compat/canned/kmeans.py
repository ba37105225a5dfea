"""`tf.compat.v1.estimator.experimental.KMeans`: k-means clustering.

TensorFlow 2.15's canned KMeans (`canned/kmeans.py`, `KMeansClustering`) on
TF 2.21's `tensorflow.python.ops.clustering_ops.KMeans`, which builds the
same TF1 training graph: the variables `clusters` (the centers, the
`CLUSTER_CENTERS_VAR_NAME`), `initialized`, and for mini-batches
`clusters_copy` / `total_counts` and friends, so model_dirs move both ways.
Each train step runs one (mini-)batch of Lloyd's algorithm; a hook fills
the centers on session start (random points, k-means++ or given centers),
another stops once the loss changes less than `relative_tolerance`.

It is a TF1 Session program (a hook runs the center initialization in the
session it is given), so it runs on the graph engine: on the function
engine every mode raises NeedsGraphEngine, which the default engine turns
into a run on the graph engine.
"""

import time
from typing import Any, Iterator, Optional

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import clustering_ops

from estimator_compat import estimator as estimator_lib
from estimator_compat import spec as spec_lib
from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine
from estimator_compat.export import PredictOutput


class _LossRelativeChangeHook(tf.compat.v1.train.SessionRunHook):
  """Requests a stop once `|loss - previous| / (1 + |previous|)` falls
  under `tolerance`."""

  def __init__(self, loss_tensor, tolerance: float):
    self._loss_tensor = loss_tensor
    self._tolerance = tolerance
    self._prev_loss = None

  def before_run(self, run_context):
    del run_context
    return tf.compat.v1.train.SessionRunArgs(self._loss_tensor)

  def after_run(self, run_context, run_values):
    loss = run_values.results
    if self._prev_loss:
      change = abs(loss - self._prev_loss) / (1 + abs(self._prev_loss))
      if change < self._tolerance:
        run_context.request_stop()
    self._prev_loss = loss


class _InitializeClustersHook(tf.compat.v1.train.SessionRunHook):
  """On session start the chief runs the center initialization until every
  center is chosen; other tasks wait for it."""

  def __init__(self, init_op, is_initialized_var, is_chief: bool):
    self._init_op = init_op
    self._is_initialized_var = is_initialized_var
    self._is_chief = is_chief

  def after_create_session(self, session, coord):
    del coord
    while True:
      try:
        if session.run(self._is_initialized_var):
          return
        if self._is_chief:
          session.run(self._init_op)
        else:
          time.sleep(1)
      except RuntimeError as error:
        tf.compat.v1.logging.info(error)


def _input_points(features, feature_columns) -> tf.Tensor:
  """The `[n, k]` points: the columns' input layer, else the dict's
  features concatenated in sorted key order, else `features` itself."""
  if not isinstance(features, dict):
    return features
  if feature_columns:
    return tf.compat.v1.feature_column.input_layer(features, feature_columns)
  keys = sorted(features)
  with tf.compat.v1.colocate_with(features[keys[0]]):
    return tf.concat([features[key] for key in keys], axis=1)


def _kmeans_model_fn(options) -> Any:
  """The model_fn over `options` (the constructor's arguments)."""

  def model_fn(features, mode, config):
    if tf.inside_function():
      raise NeedsGraphEngine(
          "KMeans is a TF1 Session program: a hook chooses the initial "
          "cluster centers by running ops in the session it is given. "
          f"{GRAPH_ENGINE_FIX}")
    points = _input_points(features, options["feature_columns"])
    (all_distances, cluster_index, losses, is_initialized, init_op,
     training_op) = clustering_ops.KMeans(
         inputs=points, num_clusters=options["num_clusters"],
         initial_clusters=options["initial_clusters"],
         distance_metric=options["distance_metric"],
         use_mini_batch=options["use_mini_batch"],
         mini_batch_steps_per_iteration=options[
             "mini_batch_steps_per_iteration"],
         random_seed=options["seed"],
         kmeans_plus_plus_num_retries=options[
             "kmeans_plus_plus_num_retries"]).training_graph()
    loss = tf.math.reduce_sum(losses)
    tf.compat.v1.summary.scalar("loss/raw", loss)
    step = tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1)
    with tf.control_dependencies([training_op, step]):
      train_op = tf.identity(loss)
    hooks = [_InitializeClustersHook(init_op, is_initialized,
                                     config.is_chief)]
    if options["relative_tolerance"] is not None:
      hooks.append(_LossRelativeChangeHook(loss,
                                           options["relative_tolerance"]))
    predictions = {KMeansClustering.ALL_DISTANCES: all_distances[0],
                   KMeansClustering.CLUSTER_INDEX: cluster_index[0]}
    return spec_lib.EstimatorSpec(
        mode=mode, predictions=predictions, loss=loss, train_op=train_op,
        eval_metric_ops={
            KMeansClustering.SCORE: tf.compat.v1.metrics.mean(loss)},
        training_hooks=hooks,
        export_outputs={
            KMeansClustering.ALL_DISTANCES:
                PredictOutput(all_distances[0]),
            KMeansClustering.CLUSTER_INDEX:
                PredictOutput(cluster_index[0]),
            tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                PredictOutput(cluster_index[0])})

  return model_fn


class KMeansClustering(estimator_lib.Estimator):
  """K-means clustering (`tf.compat.v1.estimator.experimental.KMeans`).

  `use_mini_batch=False` runs full-batch k-means (each train step one
  iteration over what `input_fn` returns); otherwise mini-batch k-means,
  syncing the centers every `mini_batch_steps_per_iteration` steps.
  `initial_clusters`: RANDOM_INIT, KMEANS_PLUS_PLUS_INIT, a `[k, d]` array
  or tensor, or `f(inputs, k)` returning up to `k` centers.
  `distance_metric`: SQUARED_EUCLIDEAN_DISTANCE or COSINE_DISTANCE.
  `relative_tolerance` stops training once the loss barely changes.
  `feature_columns` build the points with `input_layer`; without them
  every feature is used, in sorted key order.

  Raises:
    ValueError: an unknown initialization or distance metric.
  """

  SQUARED_EUCLIDEAN_DISTANCE = clustering_ops.SQUARED_EUCLIDEAN_DISTANCE
  COSINE_DISTANCE = clustering_ops.COSINE_DISTANCE
  RANDOM_INIT = clustering_ops.RANDOM_INIT
  KMEANS_PLUS_PLUS_INIT = clustering_ops.KMEANS_PLUS_PLUS_INIT
  SCORE = "score"
  CLUSTER_INDEX = "cluster_index"
  ALL_DISTANCES = "all_distances"
  CLUSTER_CENTERS_VAR_NAME = clustering_ops.CLUSTERS_VAR_NAME

  def __init__(self, num_clusters, model_dir=None,
               initial_clusters=RANDOM_INIT,
               distance_metric=SQUARED_EUCLIDEAN_DISTANCE,
               seed: Optional[int] = None, use_mini_batch: bool = True,
               mini_batch_steps_per_iteration: int = 1,
               kmeans_plus_plus_num_retries: int = 2,
               relative_tolerance: Optional[float] = None, config=None,
               feature_columns=None):
    if isinstance(initial_clusters, str) and initial_clusters not in (
        self.RANDOM_INIT, self.KMEANS_PLUS_PLUS_INIT):
      raise ValueError(
          f"Unsupported initialization algorithm '{initial_clusters}'")
    if distance_metric not in (self.SQUARED_EUCLIDEAN_DISTANCE,
                               self.COSINE_DISTANCE):
      raise ValueError(f"Unsupported distance metric '{distance_metric}'")
    self._distance_metric = distance_metric
    super().__init__(
        model_fn=_kmeans_model_fn(dict(
            num_clusters=num_clusters, initial_clusters=initial_clusters,
            distance_metric=distance_metric, seed=seed,
            use_mini_batch=use_mini_batch,
            mini_batch_steps_per_iteration=mini_batch_steps_per_iteration,
            kmeans_plus_plus_num_retries=kmeans_plus_plus_num_retries,
            relative_tolerance=relative_tolerance,
            feature_columns=feature_columns)),
        model_dir=model_dir, config=config)

  def _predict_one_key(self, input_fn, predict_key: str) -> Iterator[Any]:
    for result in self.predict(input_fn=input_fn, predict_keys=[predict_key]):
      yield result[predict_key]

  def predict_cluster_index(self, input_fn) -> Iterator[Any]:
    """Yields the index of each input point's closest center."""
    yield from self._predict_one_key(input_fn, self.CLUSTER_INDEX)

  def score(self, input_fn) -> float:
    """The sum of the distances of the first batch's points to their
    closest centers (squared for the Euclidean metric)."""
    return self.evaluate(input_fn=input_fn, steps=1)[self.SCORE]

  def transform(self, input_fn) -> Iterator[Any]:
    """Yields each point's distances to every center (Euclidean, not
    squared, for SQUARED_EUCLIDEAN_DISTANCE)."""
    for distances in self._predict_one_key(input_fn, self.ALL_DISTANCES):
      if self._distance_metric == self.SQUARED_EUCLIDEAN_DISTANCE:
        yield np.sqrt(distances)
      else:
        yield distances

  def cluster_centers(self) -> np.ndarray:
    """The cluster centers of the latest checkpoint."""
    return self.get_variable_value(self.CLUSTER_CENTERS_VAR_NAME)


# TF 2.15's name in tf.compat.v1.estimator.experimental.
KMeans = KMeansClustering
