"""train_and_evaluate with stop_if_no_decrease_hook: where does it stop?

A small MLP overfits 48 noisy training rows; the evaluation loss on other
rows falls, then rises, and the hook (checked every step) stops training
once it has not fallen for 20 steps. Evaluations follow every checkpoint.
"""

import numpy as np
import tensorflow as tf

from tests.golden_programs import _data
from tests.golden_programs import _eval_history

TRAIN_STEPS = None
CONFIG = dict(tf_random_seed=11, save_checkpoints_steps=5,
              keep_checkpoint_max=100, log_step_count_steps=10)
PARAMS = None
MAX_STEPS = 400
X, Y = _data.classification(248, 6, 3, seed=21)
_FLIP = np.random.RandomState(5).rand(48) < 0.3
Y_TRAIN = np.where(_FLIP, (Y[:48] + 1) % 3, Y[:48])
_SEEN = {}


def model_fn(features, labels, mode):
  hidden = tf.compat.v1.layers.dense(features["x"], 32, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(hidden, 3)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={"accuracy": accuracy})


def train_input_fn():
  return tf.compat.v1.data.Dataset.from_tensor_slices(
      ({"x": X[:48]}, Y_TRAIN)).repeat().batch(16)


def eval_input_fn():
  return tf.compat.v1.data.Dataset.from_tensor_slices(
      ({"x": X[48:]}, Y[48:])).batch(100)


predict_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    {"x": X[:6]}, batch_size=6, num_epochs=1, shuffle=False)


def run_training(tf_, estimator):
  hook = tf_.estimator.experimental.stop_if_no_decrease_hook(
      estimator, "loss", 20, run_every_secs=None, run_every_steps=1)
  tf_.estimator.train_and_evaluate(
      estimator,
      tf_.estimator.TrainSpec(train_input_fn, max_steps=MAX_STEPS,
                              hooks=[hook]),
      tf_.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0,
                             start_delay_secs=0))
  history = _eval_history.eval_history(estimator.eval_dir())
  _SEEN["evaluated_steps"] = [int(step) for step in history]
  _SEEN["eval_loss"] = [float(m["loss"]) for m in history.values()]
  _SEEN["stop_step"] = int(estimator.get_variable_value("global_step"))


def reset():
  _SEEN.clear()


def observations():
  return dict(_SEEN)
