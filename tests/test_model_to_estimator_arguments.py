"""model_to_estimator's argument checks and model_dir choice.

The errors are worded as the real tensorflow_estimator keras_lib (TF 2.15)
raised them for the same calls (then our "Fix:" where we add one); without
a model_dir anywhere both use a new temporary folder.
"""

import os
import tempfile

import pytest
import tensorflow as tf

import estimator_compat
from estimator_compat.keras.keras_model_estimator import model_to_estimator

estimator_compat.install()


def _model(compiled=True):
  model = tf.keras.Sequential(
      [tf.keras.layers.Dense(2, input_shape=(3,), name="d")])
  if compiled:
    model.compile(optimizer=tf.keras.optimizers.legacy.SGD(0.1), loss="mse")
  return model


class _NoConfig(tf.keras.Model):

  def __init__(self):
    super().__init__()
    self.dense = tf.keras.layers.Dense(1)

  def call(self, inputs):  # pylint: disable=arguments-differ
    return self.dense(inputs)

  def get_config(self):
    raise NotImplementedError


@pytest.mark.parametrize("kwargs, words", [
    ({}, "Either `keras_model` or `keras_model_path` needs to be provided."),
    ({"keras_model_path": "/x"}, "Please specity either `keras_model` or "
     "`keras_model_path`, but not both."),
    ({"checkpoint_format": "h5"},
     'Checkpoint format must be one of "checkpoint" or "saver". Got h5'),
])
def test_bad_arguments_are_the_estimators_errors(kwargs, words, tmp_path):
  if kwargs:
    kwargs["keras_model"] = _model()
  with pytest.raises(ValueError) as raised:
    model_to_estimator(model_dir=str(tmp_path), **kwargs)
  assert str(raised.value) == words


def test_an_uncompiled_model_is_refused(tmp_path):
  with pytest.raises(ValueError, match="has not been compiled yet. Please "
                     "compile the model with `model.compile\\(\\)`"):
    model_to_estimator(keras_model=_model(compiled=False),
                       model_dir=str(tmp_path))


def test_a_subclassed_model_must_rebuild_from_its_config(tmp_path):
  model = _NoConfig()
  model.compile(optimizer="sgd", loss="mse")
  with pytest.raises(ValueError) as raised:
    model_to_estimator(keras_model=model, checkpoint_format="saver",
                       model_dir=str(tmp_path))
  assert str(raised.value).startswith(
      "Subclassed `Model`s passed to `model_to_estimator` must implement "
      "`Model.get_config` and `Model.from_config`. Fix:")


def test_a_gcs_path_is_refused_with_the_fix(tmp_path):
  with pytest.raises(ValueError, match="Google Cloud Storage.*Fix: copy"):
    model_to_estimator(keras_model_path="gs://bucket/model.h5",
                       model_dir=str(tmp_path))


def test_without_a_model_dir_a_temporary_folder_is_used():
  estimator = model_to_estimator(keras_model=_model())
  assert estimator.model_dir.startswith(tempfile.gettempdir())
  assert os.path.isdir(os.path.join(estimator.model_dir, "keras"))


def test_a_second_estimator_reuses_the_first_keras_checkpoint(tmp_path):
  first = model_to_estimator(keras_model=_model(), model_dir=str(tmp_path))
  keras_dir = os.path.join(str(tmp_path), "keras")
  before = {name: os.stat(os.path.join(keras_dir, name)).st_mtime_ns
            for name in os.listdir(keras_dir)}
  second = model_to_estimator(keras_model=_model(), model_dir=str(tmp_path))
  after = {name: os.stat(os.path.join(keras_dir, name)).st_mtime_ns
           for name in os.listdir(keras_dir)}
  assert before == after
  # pylint: disable=protected-access
  assert (second._warm_start_settings.ckpt_to_initialize_from ==
          first._warm_start_settings.ckpt_to_initialize_from)
