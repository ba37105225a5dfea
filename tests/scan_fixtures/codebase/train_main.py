"""Entry point of the fixture codebase: trains 3 steps, prints the step."""
import sys
import tempfile

import numpy as np
import tensorflow as tf

import model  # the model_fn, from a local module


def main():
  model_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1)
  estimator = tf.estimator.Estimator(model.model_fn, config=config)
  x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
  y = (x.sum(axis=1) > 2).astype(np.int32)
  input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
      {"x": x}, y, batch_size=8, num_epochs=None, shuffle=False)
  estimator.train(input_fn, steps=3)
  print("global_step", estimator.get_variable_value("global_step"))


if __name__ == "__main__":
  main()
