"""The adapter examples train the seed program's model_fn as the Estimator.

Each example (examples/adapters/) trains the seed program's own model_fn,
fed by its own numpy_input_fn, in a TF2 loop; its training accuracy must be
within 2 points of the Estimator path's on the same model_fn and input.
"""

import pytest
import tensorflow as tf

from examples.adapters import cluster_loop, custom_loop, keras_fit, seed_model

POINTS = 0.02


@pytest.fixture(scope="module")
def estimator_accuracy(tmp_path_factory):
  return seed_model.estimator_accuracy(str(tmp_path_factory.mktemp("seed")))


def test_keras_fit(estimator_accuracy):
  assert abs(keras_fit.main() - estimator_accuracy) <= POINTS


def test_custom_loop_with_strategy_run(estimator_accuracy, tmp_path):
  assert abs(custom_loop.main(model_dir=str(tmp_path)) -
             estimator_accuracy) <= POINTS
  # Its checkpoint is the Estimator's: it resumes from step 1000.
  assert int(tf.train.load_variable(str(tmp_path), "global_step")) == (
      seed_model.STEPS)


@pytest.mark.slow
def test_cluster_coordinator_loop(estimator_accuracy):
  # One worker: the steps apply in order, as in one process. (With more,
  # parameter-server training is asynchronous and runs spread; see the
  # example's docstring.)
  assert abs(cluster_loop.main(workers=1) - estimator_accuracy) <= POINTS
