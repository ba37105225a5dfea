"""Census-like data, columns and inputs of the canned Linear/Baseline goldens.

Plain legacy code (tf.estimator / tf.feature_column only), so it runs on the
real Estimator (TF 2.15) and here. `columns(fc)` takes the feature column
namespace: `tf.feature_column` (v2 estimators) or
`tf.compat.v1.feature_column` (v1 estimators).
"""

import numpy as np
import tensorflow as tf

N = 200
_RNG = np.random.RandomState(11)
EDUCATION = ["hs", "bachelors", "masters", "doctorate"]
OCCUPATIONS = ["tech", "sales", "craft", "admin", "farming", "service",
               "armed", "exec"]
FEATURES = {
    "age": _RNG.uniform(18, 80, size=N).astype(np.float32),
    "hours": _RNG.normal(size=(N, 2)).astype(np.float32),
    "education": _RNG.choice(EDUCATION, size=N),
    "occupation": _RNG.choice(OCCUPATIONS, size=N),
    "workclass": _RNG.randint(0, 5, size=N).astype(np.int64),
    "w": _RNG.uniform(0.5, 2.0, size=N).astype(np.float32),
}
_SCORE = ((FEATURES["age"] - 45.0) / 15.0 + FEATURES["hours"][:, 0]
          + np.isin(FEATURES["education"], EDUCATION[2:]) * 1.5 - 0.5
          + _RNG.normal(scale=0.3, size=N))
BINARY = np.where(_SCORE > 0, "yes", "no")
MULTI = np.array(["low", "mid", "high"])[np.digitize(_SCORE, [-0.8, 0.8])]
MULTI_IDS = np.digitize(_SCORE, [-0.8, 0.8]).astype(np.int64)
TARGET = np.stack([_SCORE, 0.5 * FEATURES["hours"][:, 1] - 0.2],
                  axis=1).astype(np.float32)


def columns(fc, embedding=True):
  """Numeric, bucketized, vocabulary, hashed, crossed, embedding, indicator."""
  age = fc.numeric_column("age")
  age_buckets = fc.bucketized_column(age, boundaries=[30.0, 45.0, 60.0])
  education = fc.categorical_column_with_vocabulary_list(
      "education", EDUCATION)
  result = [
      fc.numeric_column("age", normalizer_fn=lambda x: (x - 45.0) / 15.0),
      fc.numeric_column("hours", shape=(2,)),
      age_buckets,
      education,
      fc.categorical_column_with_hash_bucket("occupation", 16),
      fc.crossed_column([education, age_buckets], hash_bucket_size=24),
      fc.indicator_column(fc.categorical_column_with_vocabulary_list(
          "education", EDUCATION[::-1], num_oov_buckets=1)),
  ]
  if embedding:
    result.append(fc.embedding_column(
        fc.categorical_column_with_identity("workclass", 5), dimension=2))
  return result


def input_fns(labels, batch=20, keys=None):
  """train / eval / predict input_fns over FEATURES (or its `keys`)."""
  features = {k: v for k, v in FEATURES.items() if keys is None or k in keys}

  def make(features, targets, size, repeat):
    def input_fn():
      data = tf.data.Dataset.from_tensor_slices(
          (features, targets) if targets is not None else features)
      return data.repeat(repeat).batch(size)
    return input_fn

  head = {k: v[:10] for k, v in features.items()}
  return (make(features, labels, batch, None), make(features, labels, 50, 1),
          make(head, None, 5, 1))


def config():
  return tf.estimator.RunConfig(tf_random_seed=7, save_checkpoints_steps=20,
                                save_summary_steps=10)


def serving_input_receiver_fn_for(fc, embedding=True):
  """A parsing receiver over the columns' parse spec (no label, no weight)."""

  def serving_input_receiver_fn():
    spec = fc.make_parse_example_spec(columns(fc, embedding))
    return tf.estimator.export.build_parsing_serving_input_receiver_fn(
        spec)()
  return serving_input_receiver_fn


def serving_inputs():
  """Serialized tf.Examples of the first rows, as the receiver parses them."""
  examples = []
  for i in range(4):
    feature = {
        "age": tf.train.Feature(float_list=tf.train.FloatList(
            value=[FEATURES["age"][i]])),
        "hours": tf.train.Feature(float_list=tf.train.FloatList(
            value=FEATURES["hours"][i])),
        "education": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[FEATURES["education"][i].encode()])),
        "occupation": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[FEATURES["occupation"][i].encode()])),
        "workclass": tf.train.Feature(int64_list=tf.train.Int64List(
            value=[FEATURES["workclass"][i]])),
    }
    examples.append(tf.train.Example(features=tf.train.Features(
        feature=feature)).SerializeToString())
  return {"examples": np.array(examples, dtype=object)}


def age_serving_input_receiver_fn():
  """A parsing receiver of the `age` feature alone (the v2 Baselines)."""
  spec = {"age": tf.io.FixedLenFeature([1], tf.float32)}
  return tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)()
