"""evaluate() on a read-only model_dir refuses instead of losing summaries."""

import os
import numpy as np
import pytest
import tensorflow as tf

import estimator_compat as tf_estimator


def _model_fn(features, labels, mode):
  logits = tf.compat.v1.layers.dense(features, 2)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn():
  x = np.random.RandomState(0).normal(size=(8, 3)).astype(np.float32)
  return tf.data.Dataset.from_tensor_slices((x, np.arange(8) % 2)).batch(4)


def test_evaluate_on_a_read_only_model_dir_names_the_fix(tmpfs, engine,
                                                         tmp_path):
  del engine
  mount, remount = tmpfs
  model_dir = str(mount / "model")
  estimator = tf_estimator.Estimator(_model_fn, model_dir=model_dir)
  estimator.train(_input_fn, steps=2)
  estimator.evaluate(_input_fn)  # eval/ exists: the silent case
  remount("ro")
  with pytest.raises(PermissionError, match="eval.*Fix: .*checkpoint_path"):
    estimator.evaluate(_input_fn)
  # The fix works: a writable model_dir, the read-only checkpoint.
  elsewhere = tf_estimator.Estimator(_model_fn,
                                     model_dir=str(tmp_path / "writable"))
  results = elsewhere.evaluate(_input_fn,
                               checkpoint_path=estimator.latest_checkpoint())
  assert results["global_step"] == 2
  assert os.listdir(tmp_path / "writable" / "eval")
