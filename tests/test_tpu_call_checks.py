"""TPUEstimator(use_tpu=True)'s argument and call checks (tpu/on_tpu.py).

Each message starts with what TF 2.15's TPUEstimator raised for the same
arguments (tensorflow-estimator 2.15: the constructor's checks and train()'s
max_steps ran here too; the steps and batch-size checks of train(),
evaluate() and predict() are its wording from tpu_estimator.py and
tpu_context.py, which it raised once it had found TPU cores), then the fix.
Nothing is trained: every check fails before a graph runs.
"""

import os

import pytest
import tensorflow as tf

from estimator_compat import tpu
from estimator_compat.tpu import embedding_parameters as params_lib


def _model_fn(features, labels, mode, params):
  raise AssertionError("model_fn is not reached")


def _input_fn(params):
  return tf.data.Dataset.from_tensor_slices(({"x": [[1.0]]}, [0])).repeat(
  ).batch(1, drop_remainder=True)


def _config(model_dir, **tpu_config):
  return tpu.RunConfig(model_dir=str(model_dir),
                       tpu_config=tpu.TPUConfig(**tpu_config))


def test_model_parallelism_needs_per_host_input(tmp_path):
  with pytest.raises(ValueError) as raised:
    tpu.TPUEstimator(
        model_fn=_model_fn, train_batch_size=8, config=_config(
            tmp_path, num_cores_per_replica=2,
            per_host_input_for_training=tpu.InputPipelineConfig.PER_SHARD_V1))
  assert str(raised.value).startswith(
      "Model parallelism only supports per host input for training. Please "
      "adjust TPURunconfig.per_host_input_for_training. Fix: ")


def test_tpu_embedding_needs_a_per_host_input_pipeline(tmp_path):
  column = tf.compat.v1.tpu.experimental.embedding_column(
      tf.feature_column.categorical_column_with_identity("item", 4),
      dimension=2)
  spec = tpu.experimental.EmbeddingConfigSpec(
      feature_columns=[column],
      optimization_parameters=params_lib.AdagradParameters(0.1))
  with pytest.raises(ValueError) as raised:
    tpu.TPUEstimator(
        model_fn=_model_fn, train_batch_size=8, embedding_config_spec=spec,
        config=_config(tmp_path, per_host_input_for_training=(
            tpu.InputPipelineConfig.PER_SHARD_V1)))
  assert str(raised.value).startswith(
      "Only PER_HOST_V1 and PER_HOST_V2 is supported when using TPU "
      "Embedding; got 1. Fix: ")


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(eval_batch_size=0), ValueError,
     "eval_batch_size must be positive, got 0"),
    (dict(predict_batch_size=1.5), TypeError,
     "predict_batch_size must be int, got <class 'float'>"),
])
def test_eval_and_predict_batch_sizes_are_checked(tmp_path, kwargs, error,
                                                  words):
  with pytest.raises(error) as raised:
    tpu.TPUEstimator(model_fn=_model_fn, train_batch_size=8,
                     config=_config(tmp_path), **kwargs)
  assert str(raised.value).startswith(words), str(raised.value)


@pytest.mark.parametrize("call, words", [
    (lambda est: est.train(_input_fn),
     "For TPU training, one of `steps` or `max_steps` must be set. Cannot "
     "be both `None`. Fix: pass steps=N or max_steps=N."),
    (lambda est: est.train(_input_fn, max_steps=0),
     "Must specify max_steps > 0, given: 0"),
    (lambda est: est.evaluate(_input_fn),
     "Evaluate `steps` must be set on TPU. Cannot be `None`. Fix: pass "
     "steps=N."),
    (lambda est: next(est.predict(_input_fn)),
     "predict_batch_size in TPUEstimator constructor cannot be `None` if "
     ".predict is running on TPU. Fix: pass predict_batch_size=N."),
])
def test_calls_on_the_tpu_check_their_steps_and_batch_sizes(tmp_path, call,
                                                            words):
  est = tpu.TPUEstimator(model_fn=_model_fn, train_batch_size=8,
                         eval_batch_size=8, config=_config(tmp_path / "m"))
  with pytest.raises(ValueError) as raised:
    call(est)
  assert str(raised.value).startswith(words), str(raised.value)
  assert not os.path.exists(tmp_path / "m")  # nothing written
