"""Step 3 of a migration: the MLP classifier rewritten in tf-keras.

The same model as model.py's legacy model_fn, as a compiled Keras Model:
the same layers (Keras' Dense initializes like tf.compat.v1.layers.dense),
Adam with v1's epsilon (1e-8; Keras' default is 1e-7), the same loss and
accuracy, and a serving function that takes the same serialized
tf.Examples. Checked against the real Estimator's run of model.py:

  python -m migration check \
      --flagfile=tests/migration_goldens/mlp_classifier.flags \
      --old=tests/migration_goldens/mlp_classifier \
      --new=examples.mlp_classifier.keras_rewrite:rewrite
"""

import tensorflow as tf

from examples.mlp_classifier.model import CLASSES, DIM
import migration


def build_model(hidden_units=(32,), learning_rate=0.01, epsilon=1e-8,
                kernel_initializer="glorot_uniform") -> tf.keras.Model:
  """The compiled Keras model (arguments: what a rewrite may get wrong)."""
  image = tf.keras.Input(shape=(DIM,), name="image")
  net = image
  for units in hidden_units:
    net = tf.keras.layers.Dense(units, activation="relu",
                                kernel_initializer=kernel_initializer)(net)
  logits = tf.keras.layers.Dense(CLASSES)(net)
  model = tf.keras.Model({"image": image}, logits)
  model.compile(
      optimizer=tf.keras.optimizers.Adam(learning_rate, epsilon=epsilon),
      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=[tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
  return model


def predictions(logits):
  """The legacy model_fn's predictions, from the model's logits."""
  return {"classes": tf.argmax(logits, axis=1),
          "probabilities": tf.nn.softmax(logits)}


def serving_fn(model):
  """serving_default as the legacy parsing receiver: serialized Examples."""
  spec = {"image": tf.io.FixedLenFeature([DIM], tf.float32)}

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def serve(examples):
    features = tf.io.parse_example(examples, spec)
    return predictions(model(features, training=False))

  return serve


rewrite = migration.Rewrite(build=build_model, predictions_fn=predictions,
                            serving_fn=serving_fn)
