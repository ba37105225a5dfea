"""Small legacy model_fns and data used across tests."""

import numpy as np
import tensorflow as tf

import estimator_compat as tfe

ROWS, DIM, CLASSES = 96, 4, 3


def data(rows=ROWS, seed=0):
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(rows, DIM)).astype(np.float32)
  y = (np.argmax(x[:, :CLASSES], axis=1)).astype(np.int64)
  return x, y


def classifier_fn(features, labels, mode, params):
  """A two-layer v1 classifier; params['hidden'] sets the hidden width."""
  x = features["x"] if isinstance(features, dict) else features
  hidden = tf.compat.v1.layers.dense(x, params.get("hidden", 8),
                                     activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(hidden, CLASSES)
  predictions = {"class": tf.argmax(logits, axis=1),
                 "probabilities": tf.nn.softmax(logits)}
  if mode == tfe.ModeKeys.PREDICT:
    return tfe.EstimatorSpec(mode, predictions=predictions)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  tf.compat.v1.summary.scalar("my_summary", loss * 2.0)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(
      params.get("learning_rate", 0.1)).minimize(
          loss, global_step=tf.compat.v1.train.get_global_step())
  metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels,
                                                       predictions["class"])}
  return tfe.EstimatorSpec(mode, predictions=predictions, loss=loss,
                           train_op=train_op, eval_metric_ops=metrics)


def binary_sgd_spec(mode, labels, logits, learning_rate=0.1):
  """The spec of a binary logistic model_fn trained by plain SGD."""
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  train_op = tf.compat.v1.train.GradientDescentOptimizer(
      learning_rate).minimize(
          loss, global_step=tf.compat.v1.train.get_global_step())
  return tfe.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(batch_size=16, num_epochs=None, shuffle=False, rows=ROWS,
             labels=True):
  x, y = data(rows)
  return tfe.inputs.numpy_input_fn({"x": x}, y if labels else None,
                                   batch_size=batch_size,
                                   num_epochs=num_epochs, shuffle=shuffle)


def estimator(model_dir, params=None, model_fn=classifier_fn, **config):
  config.setdefault("tf_random_seed", 1)
  return tfe.Estimator(model_fn, model_dir=str(model_dir),
                       config=tfe.RunConfig(**config),
                       params=params if params is not None else {})


def checkpoint_files(model_dir):
  """Files named model.ckpt-* in model_dir (empty when none were written)."""
  import os  # pylint: disable=g-import-not-at-top
  if not os.path.isdir(model_dir):
    return []
  return sorted(f for f in os.listdir(model_dir) if f.startswith("model.ckpt"))


def events(folder):
  """{tag: [(step, value), ...]} of scalar summaries in folder's event files."""
  import glob  # pylint: disable=g-import-not-at-top
  import os  # pylint: disable=g-import-not-at-top
  out = {}
  for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.HasField("simple_value"):
          out.setdefault(value.tag, []).append((event.step, value.simple_value))
  return out


class GlobalStepRecorder(tf.compat.v1.train.SessionRunHook):
  """Fetches the global step variable itself with each step; keeps them."""

  def __init__(self):
    self.steps = []

  def begin(self):
    self._step = tf.compat.v1.train.get_global_step()

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(self._step)

  def after_run(self, run_context, run_values):
    self.steps.append(int(run_values.results))
