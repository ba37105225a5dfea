"""InMemoryEvaluatorHook: the steps it evaluates at and what it finds.

It evaluates before the first step, every 7 steps and at the end, into
eval_mem/; the observations are that directory's history.
"""

import tensorflow as tf

from tests.golden_programs import _data
from tests.golden_programs import _eval_history

TRAIN_STEPS = 30
CONFIG = dict(tf_random_seed=5, save_checkpoints_steps=10,
              log_step_count_steps=10)
PARAMS = None
X, Y = _data.classification(160, 5, 3, seed=8)
_SEEN = {}


def model_fn(features, labels, mode):
  hidden = tf.compat.v1.layers.dense(features["x"], 16, activation=tf.nn.tanh)
  logits = tf.compat.v1.layers.dense(hidden, 3)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.3).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={"accuracy": accuracy})


def train_input_fn():
  return tf.compat.v1.data.Dataset.from_tensor_slices(
      ({"x": X[:120]}, Y[:120])).repeat().batch(20)


def eval_input_fn():
  return tf.compat.v1.data.Dataset.from_tensor_slices(
      ({"x": X[120:]}, Y[120:])).batch(16)


predict_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    {"x": X[:6]}, batch_size=6, num_epochs=1, shuffle=False)


def run_training(tf_, estimator):
  hook = tf_.estimator.experimental.InMemoryEvaluatorHook(
      estimator, eval_input_fn, name="mem", every_n_iter=7)
  estimator.train(train_input_fn, hooks=[hook], steps=TRAIN_STEPS)
  history = _eval_history.eval_history(estimator.eval_dir("mem"))
  _SEEN["evaluated_steps"] = [int(step) for step in history]
  _SEEN["eval_loss"] = [float(m["loss"]) for m in history.values()]
  _SEEN["eval_accuracy"] = [float(m["accuracy"]) for m in history.values()]


def reset():
  _SEEN.clear()


def observations():
  return dict(_SEEN)
