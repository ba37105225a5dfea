"""tf.estimator.BoostedTreesClassifier (tensorflow-estimator 2.8) with
n_classes=3: vector leaves grown from each example's 3 gradients and full
3 x 3 hessian of the maximum entropy loss (no L2: the hessian is singular,
the QR's basic solution decides), two batches per layer, two trees of
depth 2, on bucketized and indicator columns."""

import numpy as np

from tests.golden_programs import _boosted_trees_data as data

TRAINS_ON_GRAPH_ENGINE = True
LABELS = np.digitize(data.TARGET, np.quantile(data.TARGET, [1 / 3, 2 / 3])
                     ).astype(np.int64)
train_input_fn, eval_input_fn, predict_input_fn = data.input_fns(LABELS)
reset = data.reset
observations = data.observations


def build_estimator(tf, model_dir):
  return tf.estimator.BoostedTreesClassifier(
      feature_columns=data.bucketized_columns(tf.feature_column),
      n_batches_per_layer=2, model_dir=model_dir, n_classes=3, n_trees=2,
      max_depth=2, learning_rate=0.3, config=data.config(tf))


def run_training(tf, estimator):
  del tf
  data.run_training(estimator, train_input_fn)
