"""A training input that yields nothing: 0 steps (as the Estimator), a warning."""

import functools

import numpy as np
import tensorflow as tf

import estimator_compat as tfe
from tests import models


def empty_dataset_input_fn():
  x = np.zeros((0, models.DIM), np.float32)
  return tf.data.Dataset.from_tensor_slices(
      ({"x": x}, np.zeros((0,), np.int64))).batch(4)


def test_empty_input_trains_no_step_and_names_the_input_fn(tmp_path, engine,
                                                            caplog):
  del engine
  caplog.set_level("WARNING")
  est = models.estimator(tmp_path, log_step_count_steps=None)
  est.train(empty_dataset_input_fn, steps=5)
  assert est.get_variable_value("global_step") == 0
  assert ("Training ran 0 steps: the input_fn "
          "tests.test_empty_input.empty_dataset_input_fn yielded no batch"
          in caplog.text)
  assert "global_step stays at 0" in caplog.text
  caplog.clear()
  est.train(models.input_fn(num_epochs=1), steps=2)  # Not empty: no word.
  assert est.get_variable_value("global_step") == 2
  assert "Training ran 0 steps" not in caplog.text
  caplog.clear()
  x = np.zeros((0, models.DIM), np.float32)
  numpy_input = tfe.inputs.numpy_input_fn(
      {"x": x}, np.zeros((0,), np.int64), batch_size=4, num_epochs=1,
      shuffle=False)
  est.train(functools.partial(numpy_input), steps=5)
  assert est.get_variable_value("global_step") == 2
  assert "Training ran 0 steps" in caplog.text
  assert "global_step stays at 2" in caplog.text
