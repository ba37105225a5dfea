"""The parameter-server step function's stored loss (no cluster started).

train() schedules a zero-step closure to trace the model and does not wait
for it, so it may run after the first real closures: it must leave the loss
they stored alone (a log line or summary would read 0.0).
"""

import numpy as np
import tensorflow as tf

from estimator_compat.engines.function import ps_training
from estimator_compat.front.configuration import Choices
from estimator_compat.front.model_fn_call import ModelSetup
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.run_config import RunConfig
from estimator_compat.spec import EstimatorSpec


def _model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features, 3)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op)


def _iterator():
  rng = np.random.RandomState(0)
  x = rng.normal(size=(16, 4)).astype(np.float32)
  y = rng.randint(0, 3, 16).astype(np.int64)
  return iter(tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(4))


def test_a_zero_step_closure_leaves_the_stored_loss_alone(tmp_path):
  setup = ModelSetup(model_fn=_model_fn, model_dir=str(tmp_path),
                     config=RunConfig(model_dir=str(tmp_path)), params={},
                     choices=Choices())
  strategy = tf.distribute.get_strategy()
  step_fn = ps_training._StepFunction(setup, strategy)  # pylint: disable=protected-access
  iterator = _iterator()
  step_fn.function(iterator, tf.constant(0, tf.int64))
  assert step_fn.last_loss.numpy() == 0.0
  step_fn.function(iterator, tf.constant(3, tf.int64))
  stored = step_fn.last_loss.numpy()
  assert stored > 0.0
  step_fn.function(iterator, tf.constant(0, tf.int64))
  assert step_fn.last_loss.numpy() == stored


def _multiplier_model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features, 3)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
  # A TF1 idiom: per-variable gradient multipliers keyed by the variable.
  multiplier = {v: 0.0 for v in tf.compat.v1.trainable_variables()
                if "bias" in v.name}
  pairs = [(g * multiplier.get(v, 1.0), v)
           for g, v in optimizer.compute_gradients(loss)]
  train_op = optimizer.apply_gradients(
      pairs, global_step=tf.compat.v1.train.get_global_step())
  return EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op)


def test_the_model_fn_hashes_variables_as_in_a_tf1_graph(tmp_path):
  # finding G29: "Variable is unhashable" in the step function's trace.
  setup = ModelSetup(model_fn=_multiplier_model_fn, model_dir=str(tmp_path),
                     config=RunConfig(model_dir=str(tmp_path)), params={},
                     choices=Choices())
  step_fn = ps_training._StepFunction(setup, tf.distribute.get_strategy())  # pylint: disable=protected-access
  step_fn.function(_iterator(), tf.constant(2, tf.int64))
  assert step_fn.last_loss.numpy() > 0.0  # two steps ran
  bias = next(v for v in step_fn.capture.variables if "bias" in v.name)
  # Its gradients were multiplied by 0.0; a plain step would have moved it.
  np.testing.assert_array_equal(bias.numpy(), np.zeros(3))
  assert tf.Tensor._USE_EQUALITY  # pylint: disable=protected-access
