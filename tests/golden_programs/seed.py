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

# 10 steps, not more: this model (Adam at 0.01 on random labels) amplifies
# rounding differences between CPUs (a weight whose gradient is near zero
# moves by +-lr whichever way rounding tips its sign). From the same ckpt0,
# TF 2.15 on an AMD EPYC and on the machine that first recorded this golden
# ended 100 steps up to 0.05 apart, while TF 2.15 and TF 2.21 on one machine
# agree bit for bit. Nudging every weight of ckpt0 by ~1 ulp moves the result
# 2e-4 (relative) by step 10 and 5e-2 by step 20; the test allows 1e-3.
# See docs/decisions.md ("Golden tests and the CPU").
TRAIN_STEPS = 10
CONFIG = dict(tf_random_seed=1, save_checkpoints_steps=5)
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
