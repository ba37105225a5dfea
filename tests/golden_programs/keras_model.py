"""A functional tf-keras model converted by model_to_estimator.

Two named inputs, a hidden layer and logits, compiled with a new (v2) Adam
(converted to the legacy one, as the Estimator did) and an accuracy
metric; the default object-based checkpoint format. Layers are named, so
the predictions' keys do not depend on how many models the process built.
"""

import tensorflow as tf

from tests.golden_programs import _data

TRAIN_STEPS = 40
# model_to_estimator clones the model with tf-keras's TF1 graph machinery.
NEEDS_GRAPH_ENGINE = True
X, Y = _data.classification(192, 6, 3, seed=5)


def _model(tf):  # pylint: disable=redefined-outer-name
  keras = tf.keras
  a = keras.Input(shape=(4,), name="a")
  b = keras.Input(shape=(2,), name="b")
  joined = keras.layers.Concatenate(name="joined")([a, b])
  hidden = keras.layers.Dense(16, activation="relu", name="hidden")(joined)
  logits = keras.layers.Dense(3, name="logits")(hidden)
  model = keras.Model(inputs=[a, b], outputs=logits, name="two_inputs")
  model.compile(
      optimizer=keras.optimizers.Adam(learning_rate=0.01),
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=["accuracy"])
  return model


def build_estimator(tf, model_dir):  # pylint: disable=redefined-outer-name
  tf.keras.utils.set_random_seed(3)
  config = tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=20,
                                  save_summary_steps=10)
  return tf.keras.estimator.model_to_estimator(
      keras_model=_model(tf), model_dir=model_dir, config=config)


def _features(rows):
  return {"a": X[rows, :4], "b": X[rows, 4:]}


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices(
      (_features(slice(None)), Y)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(
      (_features(slice(None)), Y)).batch(64)


def predict_input_fn():
  return tf.data.Dataset.from_tensor_slices(_features(slice(0, 12))).batch(5)


def serving_input_receiver_fn():
  return tf.estimator.export.build_raw_serving_input_receiver_fn({
      "a": tf.compat.v1.placeholder(tf.float32, [None, 4], name="a"),
      "b": tf.compat.v1.placeholder(tf.float32, [None, 2], name="b"),
  })()


def serving_inputs():
  return {"a": X[:5, :4], "b": X[:5, 4:]}

