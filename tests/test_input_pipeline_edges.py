"""The function engine's input pipeline at its edges (input_pipeline.py).

Called directly, without an Estimator: what tf.data cannot carry (a list of
tensors, no tensors at all) sends the call to the graph engine; under a
strategy, constant tensors repeat at every step, tensors that change at every
step cannot be split across replicas, and an initializable iterator needs the
graph engine (the refusal the function engine really makes); input_fn code
that runs only eagerly is called eagerly, with tf_random_seed as the global
seed, which is set back after.
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.engines.function import input_pipeline
from estimator_compat.errors import NeedsGraphEngine
from estimator_compat.front.configuration import Choices
from estimator_compat.front.model_fn_call import ModelSetup
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.run_config import RunConfig

X = np.arange(8, dtype=np.float32).reshape(4, 2)
Y = np.array([[0.0], [1.0], [1.0], [0.0]], np.float32)


def _setup(seed=None):
  return ModelSetup(model_fn=None, model_dir="",
                    config=RunConfig(tf_random_seed=seed), params={},
                    choices=Choices())


def _take(dataset, n):
  return [tf.nest.map_structure(lambda t: t.numpy(), element)
          for element in dataset.take(n)]


def _list_of_labels():
  return {"x": tf.constant(X)}, [tf.constant(Y), tf.constant(1.0 - Y)]


def _one_shot():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
  return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()


def _initializable():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat()
  return tf.compat.v1.data.make_initializable_iterator(dataset).get_next()


@pytest.mark.parametrize("distributed", [False, True])
def test_a_list_of_tensors_needs_the_graph_engine(distributed):
  with pytest.raises(NeedsGraphEngine,
                     match="_list_of_labels returns a Python list of tensors"):
    input_pipeline.make_dataset(_setup(), _list_of_labels, ModeKeys.TRAIN,
                                distributed=distributed)


@pytest.mark.parametrize("distributed", [False, True])
def test_no_tensors_at_all_needs_the_graph_engine(distributed):
  with pytest.raises(NeedsGraphEngine, match="returns no tensors"):
    input_pipeline.make_dataset(_setup(), lambda: ({}, None), ModeKeys.TRAIN,
                                distributed=distributed)


def test_model_input_keeps_a_list_of_labels_as_python_parts():
  dataset, parts = input_pipeline.model_input(_setup(), _list_of_labels,
                                              ModeKeys.TRAIN)
  assert parts is not None and parts.has_labels
  # The element is the flat tensors; the parts rebuild the list.
  x, y_a, y_b = _take(dataset, 1)[0]
  np.testing.assert_array_equal(x, X)
  np.testing.assert_array_equal(y_a, Y)
  np.testing.assert_array_equal(y_b, 1.0 - Y)


def test_constant_tensors_under_a_strategy_repeat_at_every_step():
  dataset = input_pipeline.make_dataset(
      _setup(), lambda: ({"x": tf.constant(X)}, tf.constant(Y)),
      ModeKeys.TRAIN, distributed=True)
  elements = _take(dataset, 3)
  assert len(elements) == 3
  for features, labels in elements:
    np.testing.assert_array_equal(features["x"], X)
    np.testing.assert_array_equal(labels, Y)


def test_random_tensors_under_a_strategy_cannot_be_split():
  with pytest.raises(ValueError, match=(
      r"^input_fn must return a tf.data.Dataset or a callable. <lambda> "
      "returns tensors that change at every step.*cannot be split across "
      "replicas")):
    input_pipeline.make_dataset(
        _setup(1), lambda: ({"x": tf.random.uniform([4, 2])}, tf.constant(Y)),
        ModeKeys.TRAIN, distributed=True)


def test_a_one_shot_iterator_under_a_strategy_cannot_be_split():
  with pytest.raises(ValueError, match="_one_shot returns tensors that "
                     "change at every step"):
    input_pipeline.make_dataset(_setup(), _one_shot, ModeKeys.TRAIN,
                                distributed=True)


def test_a_graph_only_stream_under_a_strategy_cannot_be_split():
  # As a TF1-only API does, input_fn refuses eager execution (RuntimeError);
  # built in a graph, its tensors change at every step.
  def graph_only():
    if tf.executing_eagerly():
      raise RuntimeError("not supported when eager execution is enabled")
    return _one_shot()

  with pytest.raises(ValueError, match="graph_only returns tensors that "
                     "change at every step") as raised:
    input_pipeline.make_dataset(_setup(), graph_only, ModeKeys.TRAIN,
                                distributed=True)
  assert isinstance(raised.value.__cause__, RuntimeError)


def test_an_initializable_iterator_under_a_strategy_needs_the_graph_engine():
  with pytest.raises(NeedsGraphEngine, match="_initializable returns tensors "
                     "that read the initializable iterator"):
    input_pipeline.make_dataset(_setup(), _initializable, ModeKeys.TRAIN,
                                distributed=True)


def test_an_input_fn_failing_eagerly_and_in_a_graph_raises_the_eager_error():
  def input_fn():
    if tf.executing_eagerly():
      raise RuntimeError("eager refusal")
    raise KeyError("graph refusal")

  with pytest.raises(RuntimeError, match="eager refusal"):
    input_pipeline.make_dataset(_setup(), input_fn, ModeKeys.TRAIN,
                                distributed=True)


def test_eager_only_code_returning_a_dataset_is_called_eagerly():
  calls = []

  def input_fn():
    calls.append(tf.executing_eagerly())
    if not tf.executing_eagerly():
      raise KeyError("only eagerly")
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y))

  dataset = input_pipeline.make_dataset(_setup(), input_fn, ModeKeys.TRAIN)
  assert calls == [False, True]
  elements = _take(dataset, 10)
  assert len(elements) == 4
  np.testing.assert_array_equal(elements[3][0]["x"], X[3])
  np.testing.assert_array_equal(elements[3][1], Y[3])


def test_eager_only_code_returning_tensors_raises_the_graph_error():
  def input_fn():
    if not tf.executing_eagerly():
      raise KeyError("only eagerly")
    return {"x": tf.constant(X)}, tf.constant(Y)

  with pytest.raises(KeyError, match="only eagerly"):
    input_pipeline.make_dataset(_setup(), input_fn, ModeKeys.TRAIN)


def test_a_marked_eager_input_fn_is_called_once_eagerly_with_the_seed():
  seen = []

  def input_fn():
    seen.append((tf.executing_eagerly(), tf.compat.v1.get_seed(None)[0]))
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y))

  input_fn.estimator_compat_eager_dataset = True
  tf.random.set_seed(7)
  dataset = input_pipeline.make_dataset(_setup(3), input_fn, ModeKeys.TRAIN)
  assert seen == [(True, 3)]
  # The program's global seed is set back after input_fn.
  assert tf.compat.v1.get_seed(None)[0] == 7
  assert len(_take(dataset, 10)) == 4


def test_without_tf_random_seed_the_global_seed_is_left_alone():
  seen = []

  def input_fn():
    seen.append(tf.compat.v1.get_seed(None)[0])
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y))

  input_fn.estimator_compat_eager_dataset = True
  tf.random.set_seed(11)
  input_pipeline.make_dataset(_setup(None), input_fn, ModeKeys.TRAIN)
  assert seen == [11]
  assert tf.compat.v1.get_seed(None)[0] == 11


def test_predict_features_and_labels_are_kept_as_a_pair():
  dataset, parts = input_pipeline.model_input(
      _setup(), lambda: ({"x": tf.constant(X)}, tf.constant(Y)),
      ModeKeys.PREDICT)
  assert parts is None
  features, labels = _take(dataset, 1)[0]
  np.testing.assert_array_equal(features["x"], X)
  np.testing.assert_array_equal(labels, Y)


def test_make_input_under_a_strategy_distributes_the_batches():
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  distributed, parts = input_pipeline.make_input(
      _setup(),
      lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(2),
      ModeKeys.TRAIN, strategy)
  assert parts is None
  batches = [strategy.experimental_local_results(labels)[0].numpy()
             for _, labels in distributed]
  assert len(batches) == 2
  np.testing.assert_array_equal(np.concatenate(batches), Y)


def test_make_input_without_a_strategy_is_model_input():
  dataset, parts = input_pipeline.make_input(
      _setup(), lambda: ({"x": tf.constant(X)}, tf.constant(Y)),
      ModeKeys.EVAL, None)
  assert parts is None
  features, labels = _take(dataset, 2)[1]
  np.testing.assert_array_equal(features["x"], X)
  np.testing.assert_array_equal(labels, Y)
