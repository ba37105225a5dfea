"""Every way of importing the Estimator (scanned, never run)."""
import tensorflow
import tensorflow.compat.v1 as tf1
from tensorflow import estimator as tfe
from tensorflow.compat.v1 import estimator
import tensorflow_estimator as te
from tensorflow_estimator.python.estimator import model_fn as model_fn_lib
from tensorflow_estimator.python.estimator import gc
from tensorflow_estimator.python.estimator.estimator import Estimator
from tensorflow_estimator.python.estimator.api._v2 import estimator as tfe2

fc = tensorflow.feature_column


def build(model_fn):
  spec = model_fn_lib.EstimatorSpec
  mode = tfe.ModeKeys.TRAIN
  config = estimator.RunConfig()
  legacy = te.estimator.Estimator(model_fn)
  hook = tf1.train.LoggingTensorHook({}, every_n_iter=1)
  saver = tensorflow.estimator.CheckpointSaverHook("/tmp/x")
  kmeans = tf1.estimator.experimental.KMeans(2)
  dense = tf1.layers.dense
  column = fc.numeric_column("x")
  versions = gc.largest_export_versions(2)
  tensorflow.summary.scalar("x", 1.0, step=0)  # TF2 code: not a finding
  return (spec, mode, config, legacy, hook, saver, kmeans, dense, column,
          versions, tfe2.Estimator, Estimator(model_fn))
