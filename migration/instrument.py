"""Wraps a legacy model_fn so that both sides of a check draw the same numbers.

Three things, all through public TensorFlow API so that the wrapper runs on
the real Estimator (TF 2.15) exactly as on estimator_compat:

* Random numbers. An op's seed normally depends on how many ops the graph
  already holds, which differs between the real Estimator, the graph engine
  and a traced function. While the model_fn runs, each stateful random op
  gets (seed, n) with n counting the random ops of this model_fn call, and
  Keras' seed generator is reset, so initializers and dropout masks match on
  both sides. This is the idea of TF's `DeterministicRandomTestTool`
  (num_random_ops mode); that tool patches TensorFlow process-wide for the
  whole scope (input pipeline included) and is not safe in MirroredStrategy's
  replica threads, so the counter here is per thread and per model_fn call.
* Structure: the variables the TRAIN model_fn made (name, shape, dtype,
  trainable).
* Probe mode: TRAIN runs a train_op that only advances global_step and a hook
  fetches the loss, predictions and gradients of the first step, so the
  forward pass and gradients are read at the starting checkpoint, unchanged.
"""

import inspect
import threading
from typing import Any, Callable, Dict, List

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.framework import random_seed as _random_seed

_state = threading.local()
_original_get_seed = _random_seed.get_seed


def _counted_get_seed(op_seed):
  counter = getattr(_state, "counter", None)
  if counter is None:
    return _original_get_seed(op_seed)
  _state.counter = counter + 1
  return _state.seed, counter


def _install_seed_counter() -> None:
  if _random_seed.get_seed is not _counted_get_seed:
    _random_seed.get_seed = _counted_get_seed


def _accepted_args(fn: Callable[..., Any]) -> List[str]:
  return list(inspect.signature(fn).parameters)


def variable_name(variable: Any) -> str:
  return variable.name.split(":")[0]


def describe_variables() -> List[Dict[str, Any]]:
  """Name, shape, dtype and trainable flag of the default graph's variables."""
  trainable = {variable_name(v)
               for v in tf.compat.v1.trainable_variables()}
  described = {}
  for v in tf.compat.v1.global_variables():
    name = variable_name(v)
    described[name] = {"name": name, "shape": v.shape.as_list(),
                       "dtype": v.dtype.base_dtype.name,
                       "trainable": name in trainable}
  return [described[k] for k in sorted(described)]


class _FetchFirstStep(tf.compat.v1.train.SessionRunHook):
  """Fetches a flat dict of tensors in the first step and stores the values."""

  def __init__(self, fetches: Dict[str, Any], sink: Dict[str, Any]):
    self._fetches = fetches
    self._sink = sink
    self._done = False

  def before_run(self, run_context):
    del run_context
    if self._done:
      return None
    return tf.compat.v1.train.SessionRunArgs(self._fetches)

  def after_run(self, run_context, run_values):
    del run_context
    if not self._done:
      self._sink.update(run_values.results)
      self._done = True


def _probe_fetches(spec: Any, sink: Dict[str, Any]) -> Dict[str, Any]:
  fetches = {"loss": spec.loss}
  predictions = spec.predictions
  if isinstance(predictions, dict):
    for key, value in predictions.items():
      fetches[f"predictions/{key}"] = value
  elif predictions is not None:
    fetches["predictions"] = predictions
  variables = tf.compat.v1.trainable_variables()
  gradients = tf.gradients(spec.loss, variables)
  unconnected = []
  for variable, gradient in zip(variables, gradients):
    if gradient is None:
      unconnected.append(variable_name(variable))
    else:
      if isinstance(gradient, tf.IndexedSlices):
        gradient = tf.convert_to_tensor(gradient)
      fetches[f"gradients/{variable_name(variable)}"] = gradient
  sink["__unconnected__"] = unconnected
  return fetches


def instrument(model_fn: Callable[..., Any], seed: int,
               observed: Dict[str, Any], probe: bool = False
              ) -> Callable[..., Any]:
  """Returns model_fn wrapped for a check run (see the module docstring).

  Args:
    model_fn: the legacy model_fn.
    seed: the seed of the random ops model_fn makes.
    observed: filled with 'structure' (TRAIN) and, in probe mode, the fetched
      first-step values ('loss', 'predictions[/key]', 'gradients/<var>').
    probe: TRAIN does not update variables; see the module docstring.
  """
  _install_seed_counter()
  accepted = _accepted_args(model_fn)

  def wrapped(features, labels, mode, params, config):
    given = {"features": features, "labels": labels, "mode": mode,
             "params": params, "config": config}
    kwargs = {k: v for k, v in given.items() if k in accepted}
    previous = getattr(_state, "counter", None)
    _state.counter, _state.seed = 0, seed
    tf.keras.utils.set_random_seed(seed)
    try:
      spec = model_fn(**kwargs)
    finally:
      _state.counter = previous
    if mode != tf.estimator.ModeKeys.TRAIN:
      return spec
    observed["structure"] = describe_variables()
    if probe:
      fetches = _probe_fetches(spec, observed)
      step = tf.compat.v1.train.get_global_step()
      spec = spec._replace(
          train_op=tf.group(tf.compat.v1.assign_add(step, 1)),
          training_hooks=[_FetchFirstStep(fetches, observed)],
          training_chief_hooks=[])
    return spec

  return wrapped
