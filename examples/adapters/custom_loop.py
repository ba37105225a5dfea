"""Step 2 of a migration, with a custom loop: strategy.run over a model_fn.

  python -m examples.adapters.custom_loop   # from the repository root

The seed program's model_fn under MirroredStrategy (one device: train_step
runs the model_fn's v1 optimizer, exact with one replica in sync),
fed by its input_fn through distribute_datasets_from_function; each step
runs the model_fn's own train_op in strategy.run. At the end the variables
are written as an Estimator checkpoint, which the Estimator can resume.
"""

import tempfile

import tensorflow as tf

from estimator_compat import adapters
from estimator_compat import ModeKeys
from examples.adapters import seed_model


def main(steps: int = seed_model.STEPS, model_dir: str = None) -> float:
  """Trains in a tf.function loop; returns the training accuracy."""
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  dataset_fn = adapters.input_fn_to_dataset_fn(
      seed_model.train_input_fn(), ModeKeys.TRAIN, config=seed_model.config())
  with strategy.scope():
    module = adapters.ModelFnModule(seed_model.model_fn(),
                                    config=seed_model.config())
    module.build(*dataset_fn().element_spec)
  iterator = iter(strategy.distribute_datasets_from_function(dataset_fn))

  @tf.function
  def train_steps(iterator, n):
    for _ in tf.range(n):
      features, labels = next(iterator)
      loss = strategy.run(module.train_step, args=(features, labels))
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, loss, axis=None)

  train_steps(iterator, tf.constant(steps))
  module.save_legacy_checkpoint(model_dir or tempfile.mkdtemp())
  return seed_model.module_accuracy(module)


if __name__ == "__main__":
  print(f"accuracy {main():.3f}")
