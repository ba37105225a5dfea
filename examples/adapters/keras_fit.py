"""Step 2 of a migration, with Keras: the seed program's model_fn under fit.

  python -m examples.adapters.keras_fit   # from the repository root

The model code is still the legacy model_fn; the loop is Keras `fit`. The
model_fn's own train_op (its v1 AdamOptimizer) runs at each step.
"""

from estimator_compat import adapters
from estimator_compat import ModeKeys
from examples.adapters import seed_model


def main(steps: int = seed_model.STEPS) -> float:
  """Trains with model.fit; returns the training accuracy."""
  model = adapters.model_fn_to_keras(seed_model.model_fn(),
                                     config=seed_model.config())
  dataset_fn = adapters.input_fn_to_dataset_fn(
      seed_model.train_input_fn(), ModeKeys.TRAIN, config=seed_model.config())
  model.fit(dataset_fn(), steps_per_epoch=steps, epochs=1, verbose=0)
  return seed_model.module_accuracy(model.module)


if __name__ == "__main__":
  print(f"accuracy {main():.3f}")
