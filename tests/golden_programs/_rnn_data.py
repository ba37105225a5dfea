"""Sequences, columns and input functions of the RNN golden programs.

Rows of 1 to 4 steps: a token id (1..5, 0 pads) and a reading per step,
a context value and a weight per row; labels per row and per step. The
input_fns give the sequence features as SparseTensors (the unpadded steps),
as a tf.Example parser would. `tf` is the program's TensorFlow.
"""

import numpy as np
import tensorflow as _tf

TRAIN_STEPS = 12
ROWS = 24
STEPS = 4
_RNG = np.random.RandomState(5)
LENGTHS = _RNG.randint(1, STEPS + 1, size=ROWS)
MASK = np.arange(STEPS)[None, :] < LENGTHS[:, None]
TOKENS = np.where(MASK, _RNG.randint(1, 6, size=(ROWS, STEPS)), 0)
READINGS = np.where(MASK, _RNG.normal(size=(ROWS, STEPS)), 0.0).astype(
    np.float32)
CONTEXT = _RNG.uniform(-1.0, 1.0, size=(ROWS, 1)).astype(np.float32)
WEIGHTS = _RNG.uniform(0.5, 2.0, size=(ROWS, 1)).astype(np.float32)
_SCORE = READINGS.sum(axis=1) + (TOKENS == 3).sum(axis=1) - 1.0 + CONTEXT[:, 0]
BINARY = np.where(_SCORE > 0.0, "yes", "no")[:, None]
THREE = np.digitize(_SCORE, [-0.5, 0.8]).astype(np.int64)[:, None]
REAL = _SCORE.astype(np.float32)[:, None]
# Per step: a token above 2, padding steps 0.
STEP_LABELS = (TOKENS > 2).astype(np.int64)


def sequence_columns(tf):
  fc = tf.feature_column
  tokens = fc.sequence_categorical_column_with_identity("tokens", 6)
  return [fc.embedding_column(tokens, 3),
          fc.sequence_numeric_column("reading")]


def context_columns(tf):
  return [tf.feature_column.numeric_column("context")]


def _sparse(tf, dense, mask):
  """The unpadded steps; as from a parser, as wide as the longest row."""
  indices = tf.where(mask)
  width = tf.reduce_max(tf.reduce_sum(tf.cast(mask, tf.int64), axis=1))
  shape = tf.stack([tf.shape(dense, out_type=tf.int64)[0], width])
  return tf.sparse.SparseTensor(indices, tf.gather_nd(dense, indices), shape)


def input_fns(tf, labels):
  """train, eval and predict input_fns over the rows and `labels`.

  Prediction is one batch: per-step predictions then share their length.
  """

  def to_model_input(features, label=None):
    mask = features.pop("mask")
    features["tokens"] = _sparse(tf, features["tokens"], mask)
    features["reading"] = _sparse(tf, features["reading"], mask)
    return features if label is None else (features, label)

  def make(rows, label_values, batch, repeat):
    def input_fn():
      features = {"tokens": TOKENS[rows], "reading": READINGS[rows],
                  "mask": MASK[rows], "context": CONTEXT[rows],
                  "w": WEIGHTS[rows]}
      data = tf.data.Dataset.from_tensor_slices(
          (features, label_values[rows]) if label_values is not None
          else features)
      return data.repeat(repeat).batch(batch).map(to_model_input)
    return input_fn

  every = np.arange(ROWS)
  return (make(every, labels, 6, None), make(every, labels, 8, 1),
          make(every[:10], None, 10, 1))


def serving_input_receiver_fn_for(tf, columns):
  def serving_input_receiver_fn():
    spec = tf.feature_column.make_parse_example_spec(columns)
    return tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)()
  return serving_input_receiver_fn


def serving_inputs():
  """Serialized tf.Examples of the first rows (numpy and protobuf only)."""
  train = _tf.train
  examples = []
  for i in range(4):
    steps = LENGTHS[i]
    feature = {
        "tokens": train.Feature(int64_list=train.Int64List(
            value=TOKENS[i, :steps])),
        "reading": train.Feature(float_list=train.FloatList(
            value=READINGS[i, :steps])),
        "context": train.Feature(float_list=train.FloatList(
            value=CONTEXT[i])),
    }
    examples.append(train.Example(features=train.Features(
        feature=feature)).SerializeToString())
  return {"examples": np.array(examples, dtype=object)}
