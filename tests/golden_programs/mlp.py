"""An MLP written as a tf.keras Sequential inside model_fn, v1 Adam."""

import tensorflow as tf

from tests.golden_programs import _data

TRAIN_STEPS = 60
CONFIG = dict(tf_random_seed=11, save_checkpoints_steps=25,
              save_summary_steps=10, log_step_count_steps=20)
PARAMS = {"hidden": 32, "classes": 4, "learning_rate": 0.01}
X, Y = _data.classification(256, 10, 4, seed=1)


def model_fn(features, labels, mode, params):
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(params["hidden"], activation="relu",
                            input_shape=(10,)),
      tf.keras.layers.Dense(params["classes"]),
  ])
  logits = model(features["x"])
  classes = tf.argmax(logits, axis=1)
  predictions = {"classes": classes, "probabilities": tf.nn.softmax(logits)}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
  tf.compat.v1.summary.scalar("mean_logit", tf.reduce_mean(logits))
  optimizer = tf.compat.v1.train.AdamOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)}
  return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                    train_op=train_op, eval_metric_ops=metrics)


def _input(x, y, epochs, batch):
  return tf.compat.v1.estimator.inputs.numpy_input_fn(
      {"x": x}, y, batch_size=batch, num_epochs=epochs, shuffle=False)


train_input_fn = _input(X, Y, None, 32)
eval_input_fn = _input(X, Y, 1, 64)
predict_input_fn = _input(X[:20], None, 1, 8)


def serving_input_receiver_fn():
  return tf.estimator.export.build_raw_serving_input_receiver_fn(
      {"x": tf.zeros([1, 10])})()


def serving_inputs():
  """What a serving request feeds, by signature input name."""
  return {"x": X[:5]}
