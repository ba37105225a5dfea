"""Data, feature columns and input functions of the canned golden programs.

The same columns as a legacy wide & deep program: numeric, bucketized,
vocabulary (indicator), hashed (embedding), crossed (embedding / indicator),
identity (embedding), with a weight column. `tf` is the program's
TensorFlow, so the same code runs on TF 2.15 and on TF 2.21.
"""

import numpy as np
import tensorflow as _tf

TRAIN_STEPS = 40
ROWS = 200
_RNG = np.random.RandomState(11)
FEATURES = {
    "age": _RNG.uniform(18, 80, size=ROWS).astype(np.float32),
    "income": _RNG.normal(size=(ROWS, 2)).astype(np.float32),
    "color": _RNG.choice(["red", "green", "blue"], size=ROWS),
    "city": _RNG.choice(["paris", "lima", "oslo", "kyiv", "rome"], size=ROWS),
    "shop": _RNG.randint(0, 6, size=ROWS).astype(np.int64),
    "w": _RNG.uniform(0.5, 2.0, size=ROWS).astype(np.float32),
}
_SCORE = (FEATURES["age"] - 49.0) / 18.0 + FEATURES["income"][:, 0] + (
    FEATURES["color"] == "red")
BINARY = np.where(_SCORE > 0.5, "yes", "no")
THREE = np.array(["low", "mid", "high"])[
    np.digitize(_SCORE, [0.0, 1.0])]
REAL = (_SCORE * 2.0 + FEATURES["income"][:, 1]).astype(np.float32)


def _fc(tf, v1):
  return tf.compat.v1.feature_column if v1 else tf.feature_column


def dense_columns(tf, v1=False):
  """Columns for a DNN: every kind, dense (embedding / indicator).

  The raw age (18 to 80) enters only bucketized: unscaled it saturates the
  units, and rounding differences would grow past the goldens' tolerance.
  """
  fc = _fc(tf, v1)
  age = fc.numeric_column("age")
  age_buckets = fc.bucketized_column(age, boundaries=[30.0, 45.0, 60.0])
  color = fc.categorical_column_with_vocabulary_list(
      "color", ["red", "green", "blue"])
  city = fc.categorical_column_with_hash_bucket("city", 7)
  crossed = fc.crossed_column([color, age_buckets], 11)
  return [
      age_buckets, fc.numeric_column("income", shape=(2,)),
      fc.indicator_column(color), fc.embedding_column(city, 2),
      fc.embedding_column(crossed, 3),
      fc.embedding_column(fc.categorical_column_with_identity("shop", 6), 2),
  ]


def sparse_columns(tf, v1=False):
  """Columns for a linear model: sparse ones as they are."""
  fc = _fc(tf, v1)
  age = fc.numeric_column("age")
  age_buckets = fc.bucketized_column(age, boundaries=[30.0, 45.0, 60.0])
  color = fc.categorical_column_with_vocabulary_list(
      "color", ["red", "green", "blue"])
  return [
      age_buckets, color, fc.categorical_column_with_hash_bucket("city", 7),
      fc.crossed_column([color, age_buckets], 11),
      fc.numeric_column("income", shape=(2,)),
  ]


def input_fns(tf, labels):
  """train, eval and predict input_fns over FEATURES and `labels`."""

  def make(features, label_values, batch, repeat):
    def input_fn():
      data = tf.data.Dataset.from_tensor_slices(
          (features, label_values) if label_values is not None else features)
      return data.repeat(repeat).batch(batch)
    return input_fn

  head = {k: v[:16] for k, v in FEATURES.items()}
  return (make(FEATURES, labels, 20, None), make(FEATURES, labels, 50, 1),
          make(head, None, 5, 1))


def serving_input_receiver_fn_for(tf, columns):
  def serving_input_receiver_fn():
    spec = tf.compat.v1.feature_column.make_parse_example_spec(columns)
    return tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)()
  return serving_input_receiver_fn


def serving_inputs():
  """Serialized tf.Examples of the first rows (numpy and protobuf only)."""
  train = _tf.train
  examples = []
  for i in range(4):
    feature = {
        "age": train.Feature(float_list=train.FloatList(
            value=[FEATURES["age"][i]])),
        "income": train.Feature(float_list=train.FloatList(
            value=FEATURES["income"][i])),
        "color": train.Feature(bytes_list=train.BytesList(
            value=[FEATURES["color"][i].encode()])),
        "city": train.Feature(bytes_list=train.BytesList(
            value=[FEATURES["city"][i].encode()])),
        "shop": train.Feature(int64_list=train.Int64List(
            value=[FEATURES["shop"][i]])),
    }
    examples.append(train.Example(features=train.Features(
        feature=feature)).SerializeToString())
  return {"examples": np.array(examples, dtype=object)}
