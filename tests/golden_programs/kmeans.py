"""tf.compat.v1.estimator.experimental.KMeans: full-batch k-means++ with a
seed, relative_tolerance, and its score / transform / cluster_centers /
predict_cluster_index."""

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 10
# KMeans is a TF1 Session program (its init hook runs ops in the session):
# the default engine runs every call on the graph engine.
TRAINS_ON_GRAPH_ENGINE = True
_RNG = np.random.RandomState(3)
_CENTERS = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]], np.float32)
POINTS = (_CENTERS[np.arange(30) % 3] +
          _RNG.normal(scale=0.8, size=(30, 2))).astype(np.float32)
FEATURES = {"x": POINTS[:, :1], "y": POINTS[:, 1:]}
_SEEN = {}


def _input_fn(repeat, size):
  def input_fn():
    return tf.data.Dataset.from_tensor_slices(FEATURES).repeat(repeat).batch(
        size)
  return input_fn


train_input_fn = _input_fn(None, 30)
eval_input_fn = _input_fn(1, 30)
predict_input_fn = _input_fn(1, 7)


def reset():
  _SEEN.clear()


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  return tf.compat.v1.estimator.experimental.KMeans(
      num_clusters=3, model_dir=model_dir, use_mini_batch=False, seed=3,
      initial_clusters=tf.compat.v1.estimator.experimental.KMeans
      .KMEANS_PLUS_PLUS_INIT, relative_tolerance=1e-4,
      config=tf.estimator.RunConfig(tf_random_seed=7))


def run_training(tf, estimator):  # pylint: disable=redefined-outer-name
  estimator.train(train_input_fn, steps=TRAIN_STEPS)
  _SEEN["global_step"] = int(estimator.get_variable_value("global_step"))
  _SEEN["cluster_centers"] = estimator.cluster_centers().tolist()
  _SEEN["score"] = float(estimator.score(eval_input_fn))
  _SEEN["transform"] = [np.asarray(d).tolist()
                        for d in estimator.transform(predict_input_fn)]
  _SEEN["cluster_index"] = [
      int(i) for i in estimator.predict_cluster_index(predict_input_fn)]


def observations():
  return dict(_SEEN)
