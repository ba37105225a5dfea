"""The seed program's model_fn and data, shared by the adapter examples.

The seed program (examples/seed/distributed_training_seed.py) trains when it
runs, so its model_fn is read from the file itself: everything above its
"create the strategy" comment (imports, install(), model_fn), unchanged. The
data are drawn as the seed program draws them, after seeding numpy, and the
input_fn is the seed program's numpy_input_fn. The Estimator path trains the
same model_fn on the same input with estimator_compat's Estimator, for
comparison.
"""

import os

import numpy as np

import estimator_compat
import tensorflow as tf

estimator_compat.install()

SEED_PROGRAM = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "seed", "distributed_training_seed.py")
DATA_SEED = 1234  # As tests/seed_runner.py.
TF_RANDOM_SEED = 7
STEPS = 1000  # The seed program's steps=1000.


def model_fn():
  """The seed program's model_fn, read from the program."""
  with open(SEED_PROGRAM, encoding="utf-8") as f:
    source = f.read().split("# 创建分布式策略")[0]
  namespace = {}
  exec(compile(source, SEED_PROGRAM, "exec"), namespace)  # pylint: disable=exec-used
  return namespace["model_fn"]


def data():
  """The seed program's arrays, drawn after np.random.seed(DATA_SEED)."""
  state = np.random.get_state()
  np.random.seed(DATA_SEED)
  x = np.random.random((1000, 10))
  y = np.random.randint(0, 10, 1000)
  np.random.set_state(state)
  return x, y


def train_input_fn():
  """The seed program's input_fn (numpy_input_fn, shuffled, endless)."""
  x, y = data()
  return estimator_compat.inputs.numpy_input_fn(
      x={"feature": x}, y=y, num_epochs=None, shuffle=True)


def config(**kwargs) -> estimator_compat.RunConfig:
  return estimator_compat.RunConfig(tf_random_seed=TF_RANDOM_SEED, **kwargs)


def accuracy(logits) -> float:
  """Training accuracy of the seed model's logits on the seed data."""
  _, y = data()
  return float((np.argmax(np.asarray(logits), axis=1) == y).mean())


def module_accuracy(module) -> float:
  """Accuracy of a ModelFnModule holding the seed model.

  The seed model_fn computes its loss in every mode, so it needs labels
  even to predict: EVAL mode gives the predictions (the logits).
  """
  x, y = data()
  features = {"feature": tf.constant(x)}
  logits = module(features, tf.constant(y), mode="eval")["predictions"]
  return accuracy(logits)


def estimator_accuracy(model_dir: str, steps: int = STEPS) -> float:
  """The Estimator path: the same model_fn and input_fn, Estimator.train."""
  seed_model_fn = model_fn()
  estimator = estimator_compat.Estimator(
      seed_model_fn, model_dir=model_dir,
      config=config(log_step_count_steps=None))
  estimator.train(train_input_fn(), steps=steps)

  def predict_fn(features, mode):
    # predict() gives no labels; the seed model_fn's loss needs some.
    labels = tf.zeros(tf.shape(features["feature"])[:1], tf.int64)
    spec = seed_model_fn(features, labels, mode)
    return estimator_compat.EstimatorSpec(mode, predictions=spec.predictions)

  x, _ = data()
  evaluator = estimator_compat.Estimator(predict_fn, model_dir=model_dir,
                                         config=config())
  logits = evaluator.predict(estimator_compat.inputs.numpy_input_fn(
      {"feature": x}, shuffle=False), yield_single_examples=False)
  return accuracy(np.concatenate(list(logits)))
