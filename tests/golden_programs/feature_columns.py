"""A custom estimator on feature columns, with v1 metrics."""

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 50
CONFIG = dict(tf_random_seed=5, save_checkpoints_steps=20,
              save_summary_steps=10)
PARAMS = {"learning_rate": 0.1}
_RNG = np.random.RandomState(3)
_N = 240
FEATURES = {
    "age": _RNG.uniform(18, 80, size=_N).astype(np.float32),
    "income": _RNG.normal(size=(_N, 2)).astype(np.float32),
    "color": _RNG.choice(["red", "green", "blue"], size=_N),
    "shop": _RNG.randint(0, 6, size=_N).astype(np.int64),
}
LABELS = ((FEATURES["age"] > 45) ^ (FEATURES["color"] == "red")).astype(
    np.int64)


def _columns():
  fc = tf.compat.v1.feature_column
  age = fc.numeric_column("age")
  return [
      fc.bucketized_column(age, boundaries=[30.0, 45.0, 60.0]),
      fc.numeric_column("income", shape=(2,)),
      fc.indicator_column(fc.categorical_column_with_vocabulary_list(
          "color", ["red", "green", "blue"])),
      fc.embedding_column(fc.categorical_column_with_identity("shop", 6), 3),
  ]


def model_fn(features, labels, mode, params):
  net = tf.compat.v1.feature_column.input_layer(features, _columns())
  net = tf.compat.v1.layers.dense(net, 16, activation=tf.nn.tanh)
  logits = tf.compat.v1.layers.dense(net, 1)
  probability = tf.squeeze(tf.sigmoid(logits), axis=1)
  predicted = tf.cast(probability > 0.5, tf.int64)
  predictions = {"probability": probability, "class": predicted}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  loss = tf.compat.v1.losses.sigmoid_cross_entropy(
      tf.expand_dims(labels, 1), logits)
  train_op = tf.compat.v1.train.AdagradOptimizer(
      params["learning_rate"]).minimize(
          loss, global_step=tf.compat.v1.train.get_global_step())
  metrics = {
      "accuracy": tf.compat.v1.metrics.accuracy(labels, predicted),
      "precision": tf.compat.v1.metrics.precision(labels, predicted),
      "recall": tf.compat.v1.metrics.recall(labels, predicted),
      "auc": tf.compat.v1.metrics.auc(labels, probability),
      "mean_probability": tf.compat.v1.metrics.mean(probability),
  }
  return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                    train_op=train_op, eval_metric_ops=metrics)


def _dataset(features, labels, batch, repeat):
  def input_fn():
    data = tf.data.Dataset.from_tensor_slices(
        (features, labels) if labels is not None else features)
    return data.repeat(repeat).batch(batch)
  return input_fn


train_input_fn = _dataset(FEATURES, LABELS, 24, None)
eval_input_fn = _dataset(FEATURES, LABELS, 60, 1)
predict_input_fn = _dataset({k: v[:16] for k, v in FEATURES.items()}, None,
                            5, 1)


def serving_input_receiver_fn():
  spec = tf.compat.v1.feature_column.make_parse_example_spec(_columns())
  return tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)()


def serving_inputs():
  """Serialized tf.Examples of the first rows."""
  examples = []
  for i in range(4):
    feature = {
        "age": tf.train.Feature(float_list=tf.train.FloatList(
            value=[FEATURES["age"][i]])),
        "income": tf.train.Feature(float_list=tf.train.FloatList(
            value=FEATURES["income"][i])),
        "color": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[FEATURES["color"][i].encode()])),
        "shop": tf.train.Feature(int64_list=tf.train.Int64List(
            value=[FEATURES["shop"][i]])),
    }
    examples.append(tf.train.Example(features=tf.train.Features(
        feature=feature)).SerializeToString())
  return {"examples": np.array(examples, dtype=object)}
