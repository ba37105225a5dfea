"""The seed document's model, with the fixes the real Estimator needs to finish.

Same model, loss, optimizer and input API as examples/seed/ (a Keras
Sequential inside model_fn, sparse_categorical_crossentropy on logits, v1
Adam at 0.01, tf.estimator.inputs.numpy_input_fn over 1000 x 10 features),
but on fixed data, unshuffled, and with global_step passed to minimize():
without it the real Estimator never finishes, so there would be nothing to
compare.
"""

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 100
CONFIG = dict(tf_random_seed=1, save_checkpoints_steps=50)
PARAMS = None
_RNG = np.random.RandomState(2024)
X = _RNG.random_sample((1000, 10))
Y = _RNG.randint(0, 10, 1000)


def model_fn(features, labels, mode):
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(128, activation='relu', input_shape=(10,)),
      tf.keras.layers.Dense(10)
  ])
  predictions = model(features['feature'])
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
      labels, predictions, from_logits=True))
  train_op = tf.compat.v1.train.AdamOptimizer(learning_rate=0.01).minimize(
      loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                    train_op=train_op)


train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    x={'feature': X}, y=Y, num_epochs=None, shuffle=False)
eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    x={'feature': X}, y=Y, num_epochs=1, shuffle=False)
predict_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    x={'feature': X[:10]}, num_epochs=1, shuffle=False)
