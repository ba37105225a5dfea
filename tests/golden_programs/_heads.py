"""What the head golden programs share: data, a small network, serving.

Each head program is a custom model_fn that ends in
`head.create_estimator_spec(...)`, as TF 2.15's Head API documents.
"""

import numpy as np
import tensorflow as tf

CONFIG = dict(tf_random_seed=7, save_checkpoints_steps=20,
              save_summary_steps=10)
PARAMS = {}
TRAIN_STEPS = 40
ROWS = 96
_RNG = np.random.RandomState(21)
X = _RNG.normal(size=(ROWS, 6)).astype(np.float32)
WEIGHTS = _RNG.uniform(0.5, 2.0, size=ROWS).astype(np.float32)
SCORES = X @ _RNG.normal(size=(6, 3)).astype(np.float32)


def logits_of(features, units):
  """A one-hidden-layer network from features['x'] to `units` logits."""
  net = tf.compat.v1.layers.dense(features["x"], 8, activation=tf.nn.relu,
                                  name="hidden")
  return tf.compat.v1.layers.dense(net, units, name="logits")


def keras_spec(head, features, labels, mode, logits, learning_rate=0.1):
  """create_estimator_spec with a Keras legacy optimizer, as canned v2 did."""
  optimizer = tf.keras.optimizers.legacy.Adagrad(learning_rate)
  if mode == tf.estimator.ModeKeys.TRAIN:
    optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
  return head.create_estimator_spec(
      features=features, mode=mode, logits=logits, labels=labels,
      optimizer=optimizer,
      trainable_variables=tf.compat.v1.trainable_variables())


def v1_spec(head, features, labels, mode, logits, learning_rate=0.1):
  """create_estimator_spec with a tf.compat.v1.train optimizer via train_op_fn."""
  def train_op_fn(loss):
    return tf.compat.v1.train.AdagradOptimizer(learning_rate).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
  return head.create_estimator_spec(
      features=features, mode=mode, logits=logits, labels=labels,
      train_op_fn=train_op_fn)


def input_fns(labels, extra=None):
  """(train, eval, predict) input_fns over X (+ extra features) and labels."""
  features = {"x": X}
  features.update(extra or {})

  def make(feats, labs, batch, repeat):
    def input_fn():
      data = tf.data.Dataset.from_tensor_slices(
          (feats, labs) if labs is not None else feats)
      return data.repeat(repeat).batch(batch)
    return input_fn

  return (make(features, labels, 16, None), make(features, labels, 32, 1),
          make({k: v[:12] for k, v in features.items()}, None, 5, 1))


def serving_input_receiver_fn():
  spec = {"x": tf.io.FixedLenFeature([6], tf.float32)}
  return tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)()


def serving_inputs():
  """Serialized tf.Examples of the first rows."""
  examples = [
      tf.train.Example(features=tf.train.Features(feature={
          "x": tf.train.Feature(float_list=tf.train.FloatList(value=X[i]))
      })).SerializeToString() for i in range(4)]
  return {"examples": np.array(examples, dtype=object)}
