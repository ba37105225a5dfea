"""tf.compat.v1.estimator.experimental.KMeans (TF 2.15's KMeansClustering).

The golden `kmeans` compares centers, score, transform and predictions with
the real Estimator; these tests check one Lloyd step against numpy, the
resume from a checkpoint, the checks and the engines.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tfe
from estimator_compat import v1 as tfe_v1
from estimator_compat.errors import NeedsGraphEngine

KMeans = tfe_v1.experimental.KMeans
POINTS = np.array([[0., 0.], [1., 0.], [0., 1.], [5., 5.], [6., 5.],
                   [5., 7.]], np.float32)
START = np.array([[1., 1.], [4., 4.]], np.float32)


def _input_fn():
  return tf.data.Dataset.from_tensor_slices(
      {"b": POINTS[:, 1:], "a": POINTS[:, :1]}).repeat(1).batch(6)


@pytest.fixture(autouse=True)
def _default_engine(monkeypatch):
  monkeypatch.delenv("ESTIMATOR_COMPAT_ENGINE", raising=False)


def test_full_batch_step_moves_centers_to_their_points_mean(tmp_path):
  kmeans = KMeans(num_clusters=2, model_dir=str(tmp_path),
                  initial_clusters=START, use_mini_batch=False)
  kmeans.train(_input_fn, steps=1)
  # Features are taken in sorted key order: a, then b.
  np.testing.assert_allclose(kmeans.cluster_centers(),
                             [POINTS[:3].mean(0), POINTS[3:].mean(0)],
                             rtol=1e-6)
  # Resuming restores `clusters` (built with validate_shape=False).
  kmeans.train(_input_fn, steps=1)
  assert kmeans.get_variable_value("global_step") == 2
  centers = kmeans.cluster_centers()
  squared = ((POINTS[:, None, :] - centers[None]) ** 2).sum(-1)
  assert list(kmeans.predict_cluster_index(_input_fn)) == [0, 0, 0, 1, 1, 1]
  np.testing.assert_allclose(kmeans.score(_input_fn), squared.min(1).sum(),
                             rtol=1e-5)
  np.testing.assert_allclose(np.stack(list(kmeans.transform(_input_fn))),
                             np.sqrt(squared), rtol=1e-5)


def test_relative_tolerance_stops_training(tmp_path):
  kmeans = KMeans(num_clusters=2, model_dir=str(tmp_path),
                  initial_clusters=START, use_mini_batch=False,
                  relative_tolerance=1e-3)
  kmeans.train(lambda: _input_fn().repeat(), steps=50)
  assert kmeans.get_variable_value("global_step") < 50


def test_explicit_function_engine_names_the_graph_engine(tmp_path):
  kmeans = KMeans(num_clusters=2, model_dir=str(tmp_path),
                  config=tfe.RunConfig(engine="function"))
  with pytest.raises(NeedsGraphEngine, match="KMeans.*graph engine"):
    kmeans.train(_input_fn, steps=1)


@pytest.mark.parametrize("kwargs,message", [
    (dict(initial_clusters="nearest"), "Unsupported initialization"),
    (dict(distance_metric="manhattan"), "Unsupported distance metric"),
])
def test_bad_options_are_refused(kwargs, message):
  with pytest.raises(ValueError, match=message):
    KMeans(num_clusters=2, **kwargs)
