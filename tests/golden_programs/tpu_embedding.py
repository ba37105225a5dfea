"""TPUEstimator(use_tpu=False) with an EmbeddingConfigSpec: TPU embedding
columns (one own table, two features sharing one) and Adagrad embedding
optimization parameters, on the CPU path TF 2.15 took without a TPU (the
columns are ordinary embedding columns; the model's optimizer trains them).
"""

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 15
ROWS = 40
_RNG = np.random.RandomState(8)
FEATURES = {
    "item": _RNG.randint(0, 10, size=(ROWS, 1)).astype(np.int64),
    "user": _RNG.randint(0, 8, size=(ROWS, 1)).astype(np.int64),
    "ad": _RNG.randint(0, 8, size=(ROWS, 1)).astype(np.int64),
    "x": _RNG.normal(size=(ROWS, 2)).astype(np.float32),
}
LABELS = ((FEATURES["item"][:, 0] % 3 == 0) ^
          (FEATURES["x"][:, 0] > 0)).astype(np.float32)[:, None]


def columns(tf):  # pylint: disable=redefined-outer-name
  fc = tf.feature_column
  tpu = tf.compat.v1.tpu.experimental
  item = fc.categorical_column_with_identity("item", 10)
  user = fc.categorical_column_with_identity("user", 8)
  ad = fc.categorical_column_with_identity("ad", 8)
  return ([tpu.embedding_column(item, 4)] +
          tpu.shared_embedding_columns([user, ad], 3) +
          [fc.numeric_column("x", shape=(2,))])


def _input_fn(rows, labels, repeat):
  def input_fn(params):
    data = tf.data.Dataset.from_tensor_slices(
        ({k: v[rows] for k, v in FEATURES.items()}, labels[rows])
        if labels is not None else {k: v[rows] for k, v in FEATURES.items()})
    return data.repeat(repeat).batch(params["batch_size"],
                                     drop_remainder=repeat is None)
  return input_fn


_EVERY = np.arange(ROWS)
train_input_fn = _input_fn(_EVERY, LABELS, None)
eval_input_fn = _input_fn(_EVERY, LABELS, 1)
predict_input_fn = _input_fn(_EVERY[:12], None, 1)


def model_fn(features, labels, mode, params):
  net = tf.compat.v1.keras.layers.DenseFeatures(columns(tf))(features)
  net = tf.compat.v1.layers.dense(net, 6, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(net, 1)
  probabilities = tf.sigmoid(logits)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
        mode, predictions={"probabilities": probabilities, "logits": logits})
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    def metric_fn(labels, probabilities):
      return {"accuracy": tf.compat.v1.metrics.accuracy(
          labels, tf.cast(probabilities > 0.5, tf.float32))}
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
        mode, loss=loss, eval_metrics=(metric_fn, [labels, probabilities]))
  optimizer = tf.compat.v1.train.AdagradOptimizer(0.3)
  train_op = optimizer.minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  del params
  return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss,
                                                    train_op=train_op)


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  tpu = tf.compat.v1.estimator.tpu
  spec = tpu.experimental.EmbeddingConfigSpec(
      feature_columns=columns(tf),
      optimization_parameters=(
          tf.compat.v1.tpu.experimental.AdagradParameters(0.1)))
  return tpu.TPUEstimator(
      model_fn=model_fn, model_dir=model_dir, use_tpu=False,
      train_batch_size=8, eval_batch_size=8, predict_batch_size=4,
      embedding_config_spec=spec, export_to_tpu=False,
      config=tpu.RunConfig(tf_random_seed=6))


def serving_input_receiver_fn():
  return tf.estimator.export.build_raw_serving_input_receiver_fn({
      "item": tf.compat.v1.placeholder(tf.int64, [None, 1], "item"),
      "user": tf.compat.v1.placeholder(tf.int64, [None, 1], "user"),
      "ad": tf.compat.v1.placeholder(tf.int64, [None, 1], "ad"),
      "x": tf.compat.v1.placeholder(tf.float32, [None, 2], "x"),
  })()


def serving_inputs():
  return {k: v[:4] for k, v in FEATURES.items()}
