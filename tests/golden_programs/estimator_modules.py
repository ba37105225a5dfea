"""TF1-era imports of the Estimator by module path (TPU and Cloud samples).

`import tensorflow.compat.v1.estimator as est`, `from
tensorflow.compat.v2.estimator import Estimator` and the submodules
(`...estimator.export`, `...estimator.inputs`, `...estimator.experimental`)
are module imports, not attribute reads: they need the module paths in
sys.modules.
"""

import tensorflow as tf
import tensorflow.compat.v1.estimator as est
from tensorflow.compat.v1.estimator import EstimatorSpec
from tensorflow.compat.v1.estimator import ModeKeys
from tensorflow.compat.v1.estimator.export import (
    build_raw_serving_input_receiver_fn)
from tensorflow.compat.v1.estimator.inputs import numpy_input_fn
from tensorflow.compat.v2.estimator import Estimator
from tensorflow.compat.v2.estimator import RunConfig
from tensorflow.estimator.experimental import call_logit_fn

from tests.golden_programs import _data

TRAIN_STEPS = 30
X, Y = _data.classification(128, 6, 3, seed=7)


def _logit_fn(features):
  hidden = tf.compat.v1.layers.dense(features["x"], 16, activation=tf.nn.relu)
  return tf.compat.v1.layers.dense(hidden, 3)


def model_fn(features, labels, mode, params):
  logits = call_logit_fn(_logit_fn, features, mode, params, None)
  classes = tf.argmax(logits, axis=1)
  predictions = {"classes": classes, "logits": logits}
  if mode == ModeKeys.PREDICT:
    return EstimatorSpec(mode, predictions=predictions)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(
      params["learning_rate"]).minimize(
          loss, global_step=tf.compat.v1.train.get_global_step())
  metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)}
  return est.EstimatorSpec(mode, predictions=predictions, loss=loss,
                           train_op=train_op, eval_metric_ops=metrics)


def build_estimator(tf_module, model_dir):
  del tf_module  # This program uses only the modules it imported.
  return Estimator(model_fn=model_fn, model_dir=model_dir,
                   config=RunConfig(tf_random_seed=3,
                                    save_checkpoints_steps=10),
                   params={"learning_rate": 0.1})


train_input_fn = numpy_input_fn({"x": X}, Y, batch_size=16, num_epochs=None,
                                shuffle=False)
eval_input_fn = numpy_input_fn({"x": X}, Y, batch_size=32, num_epochs=1,
                               shuffle=False)
predict_input_fn = numpy_input_fn({"x": X[:12]}, None, batch_size=5,
                                  num_epochs=1, shuffle=False)


def serving_input_receiver_fn():
  return build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 6])})()


def serving_inputs():
  """What a serving request feeds, by signature input name."""
  return {"x": X[:4]}
