"""Trains, evaluates and exports the MLP classifier: an absl binary around a
legacy Estimator (train_and_evaluate with a FinalExporter; the SavedModel
serves serialized tf.Examples).

  python examples/mlp_classifier/train.py --model_dir=/tmp/mlp --train_steps=500
"""

import os
import sys

from absl import app
from absl import flags

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", ".."))

import estimator_compat  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

from examples.mlp_classifier import model  # pylint: disable=g-import-not-at-top,wrong-import-position

estimator_compat.install()

flags.DEFINE_string("model_dir", "/tmp/mlp_classifier",
                    "Checkpoints and summaries; training resumes from here.")
flags.DEFINE_integer("train_steps", 1000, "Global step to train to.")
flags.DEFINE_list("hidden_units", ["128"], "Hidden layer widths.")
flags.DEFINE_float("learning_rate", 0.001, "Adam learning rate.")
flags.DEFINE_integer("batch_size", 64, "Examples per batch.")
FLAGS = flags.FLAGS


def main(argv):
  del argv
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  params = {"hidden_units": [int(u) for u in FLAGS.hidden_units],
            "learning_rate": FLAGS.learning_rate,
            "batch_size": FLAGS.batch_size}
  estimator = tf.estimator.Estimator(
      model.model_fn, model_dir=FLAGS.model_dir, params=params,
      config=tf.estimator.RunConfig(tf_random_seed=42,
                                    save_checkpoints_steps=250))
  metrics, _ = tf.estimator.train_and_evaluate(
      estimator,
      tf.estimator.TrainSpec(model.input_fn, max_steps=FLAGS.train_steps),
      tf.estimator.EvalSpec(
          model.input_fn, steps=None, throttle_secs=0,
          exporters=tf.estimator.FinalExporter(
              "mlp", model.serving_input_receiver_fn)))
  print(f"accuracy={metrics['accuracy']:.4f} "
        f"global_step={metrics['global_step']}")
  exports = os.path.join(FLAGS.model_dir, "export", "mlp")
  latest = os.path.join(exports, sorted(os.listdir(exports))[-1])
  print(f"exported SavedModel: {latest}")


if __name__ == "__main__":
  app.run(main)
