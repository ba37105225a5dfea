"""Object-based checkpoints from an Estimator, as TensorFlow's checkpoint
guide showed them: a Keras model and optimizer trained with a GradientTape
inside model_fn, saved through `Scaffold(saver=tf.train.Checkpoint(...))`,
then restored into fresh objects with `tf.train.Checkpoint.restore`.

  python guide_object_checkpoint.py --model_dir=DIR
"""

import argparse

import tensorflow as tf
import tensorflow.compat.v1 as tf_compat

parser = argparse.ArgumentParser()
parser.add_argument("--model_dir", default="./tf_estimator_example/")


class Net(tf.keras.Model):
  """A linear model."""

  def __init__(self):
    super().__init__()
    self.l1 = tf.keras.layers.Dense(5)

  def call(self, x):
    return self.l1(x)


def toy_dataset():
  inputs = tf.range(10.)[:, None]
  labels = inputs * 5. + tf.range(5.)[None, :]
  return tf.data.Dataset.from_tensor_slices(
      dict(x=inputs, y=labels)).repeat().batch(2)


def model_fn(features, labels, mode):
  del labels
  net = Net()
  opt = tf.keras.optimizers.Adam(0.1)
  ckpt = tf.train.Checkpoint(step=tf_compat.train.get_global_step(),
                             optimizer=opt, net=net)
  with tf.GradientTape() as tape:
    output = net(features["x"])
    loss = tf.reduce_mean(tf.abs(output - features["y"]))
  variables = net.trainable_variables
  gradients = tape.gradient(loss, variables)
  return tf.estimator.EstimatorSpec(
      mode, loss=loss,
      train_op=tf.group(opt.apply_gradients(zip(gradients, variables)),
                        ckpt.step.assign_add(1)),
      scaffold=tf_compat.train.Scaffold(saver=ckpt))


def main():
  args = parser.parse_args()
  tf.keras.backend.clear_session()
  est = tf.estimator.Estimator(model_fn, args.model_dir)
  est.train(toy_dataset, steps=10)
  opt = tf.keras.optimizers.Adam(0.1)
  net = Net()
  ckpt = tf.train.Checkpoint(step=tf.Variable(1, dtype=tf.int64),
                             optimizer=opt, net=net)
  ckpt.restore(tf.train.latest_checkpoint(args.model_dir))
  print("restored step:", ckpt.step.numpy())
  print("restored kernel shape:", net.l1.kernel.shape.as_list()
        if net.l1.built else "not built")


if __name__ == "__main__":
  main()
