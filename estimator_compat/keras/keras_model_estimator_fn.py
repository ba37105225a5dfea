"""The model_fn of `tf.keras.estimator.model_to_estimator`.

For each call the compiled tf-keras model is cloned into the Estimator's
graph with tf-keras's own graph-mode (TF1) machinery: the input_fn's
features and labels become the clone's inputs and targets, its optimizer
counts the Estimator's global step, and its compiled loss, metrics and
train update become the EstimatorSpec, with the model's outputs (by output
name) as predictions, as tensorflow-estimator 2.15's `keras_lib` built it.
That machinery runs only in a TF1 graph, so the function engine hands
these calls to the graph engine.
"""

import collections.abc
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

import tensorflow as tf
from tensorflow.python.checkpoint import checkpoint as object_checkpoint  # pylint: disable=g-direct-tensorflow-import

from estimator_compat.errors import GRAPH_ENGINE_FIX, NeedsGraphEngine
from estimator_compat.export import PredictOutput
from estimator_compat.checkpoints import replacing_saver
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.spec import EstimatorSpec

# The global step's name in the Keras model's object graph (checkpoints).
GLOBAL_STEP_EDGE = "estimator_global_step"
_SERVING_KEY = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY


class FormattedKeyError(KeyError):
  """A KeyError whose message keeps its newlines when printed."""

  def __init__(self, message: str):
    super().__init__(message)
    self.message = message

  def __str__(self) -> str:
    return self.message


def _as_tensor(value: Any) -> Any:
  if tf.is_tensor(value):
    return value
  return tf.compat.v1.convert_to_tensor_or_sparse_tensor(value)


def _missing_keys_error(what: str, keys: Any, expected: Any,
                        missing: Any) -> FormattedKeyError:
  return FormattedKeyError(
      f"The dictionary passed into {what} does not cover requested keys "
      "defined in the keras model."
      f"\n\tExpected keys: {set(expected)}"
      f"\n\t{what} keys: {set(keys)}"
      f"\n\tMissed keys: {set(missing)}"
      "\nFix: name the input_fn's dictionary entries after the model's "
      "Input layers (inputs) and outputs (labels).")


def _ordered(value: Any, names: Optional[List[str]], what: str
             ) -> Optional[List[Any]]:
  """`value` as a list of tensors in the order of `names` (dict keys)."""
  if value is None:
    return None
  if isinstance(value, (list, tuple)):
    return [_as_tensor(v) for v in value]
  if isinstance(value, dict):
    missing = set(names) - set(value)
    if missing:
      raise _missing_keys_error(what, value, names, missing)
    return [_as_tensor(value[name]) for name in names]
  return [_as_tensor(value)]


def split_sample_weights(features: Any) -> Tuple[Any, Any]:
  """({'features': f, 'sample_weights': w}) -> (f, w); else (features, None)."""
  if isinstance(features, dict) and set(features) == {"features",
                                                      "sample_weights"}:
    return features["features"], features["sample_weights"]
  return features, None


def keras_inputs(model: tf.keras.Model, features: Any, labels: Any):
  """The clone's inputs, targets and sample weights from input_fn's output.

  Returns:
    (inputs: a list, or a dict for a model built on dict inputs; targets:
    a list or None; sample weights or None).

  Raises:
    FormattedKeyError: a dict lacks one of the model's input/output names.
  """
  features, weights = split_sample_weights(features)
  graph_network = model._is_graph_network  # pylint: disable=protected-access
  input_names = output_names = None
  if isinstance(features, dict):
    input_names = (model.input_names if graph_network else
                   [f"input_{i}" for i in range(1, len(features) + 1)])
  if isinstance(labels, dict):
    output_names = (model.output_names if graph_network else
                    [f"output_{i}" for i in range(1, len(labels) + 1)])
  if isinstance(model.inputs, dict):
    inputs = {name: _as_tensor(features[name]) for name in model.inputs}
  elif model.inputs is None and isinstance(features, dict):
    inputs = {name: _as_tensor(value) for name, value in features.items()}
  else:
    inputs = _ordered(features, input_names, "features")
  return inputs, _ordered(labels, output_names, "labels"), weights


def per_output_weights(weights: Any, output_names: List[str]) -> List[Any]:
  """Sample weights as one entry (or None) per model output.

  Raises:
    ValueError / TypeError: weights that do not match the outputs.
  """
  if weights is None or (isinstance(weights, (list, tuple)) and
                         not weights):
    return [None] * len(output_names)
  if len(output_names) == 1:
    if isinstance(weights, (list, tuple)) and len(weights) == 1:
      return list(weights)
    if isinstance(weights, dict) and output_names[0] in weights:
      return [weights[output_names[0]]]
    return [weights]
  if isinstance(weights, (list, tuple)):
    if len(weights) != len(output_names):
      raise ValueError(
          f"Provided `sample_weights` was a list of {len(weights)} elements, "
          f"but the model has {len(output_names)} outputs. You should "
          "provide one `sample_weights`array per model output.")
    return list(weights)
  if isinstance(weights, collections.abc.Mapping):
    unknown = set(weights) - set(output_names)
    if unknown:
      raise ValueError(
          f"Unknown entries in sample_weights dictionary: {list(unknown)}. "
          f"Only expected following keys: {output_names}")
    return [weights.get(name) for name in output_names]
  raise TypeError(
      "The model has multiple outputs, so `sample_weights` should be either "
      "a list or a dict. Provided `sample_weights` type not understood: "
      f"{weights}")


def clone_in_graph(mode: str, model: tf.keras.Model, custom_objects: Any,
                   features: Any = None, labels: Any = None,
                   optimizer_config: Any = None) -> tf.keras.Model:
  """A compiled (unless PREDICT) clone of `model` in the default graph."""
  tf.keras.backend.set_learning_phase(mode == ModeKeys.TRAIN)
  inputs, targets, weights = keras_inputs(model, features, labels)
  compile_clone = mode != ModeKeys.PREDICT
  global_step = None
  if compile_clone:
    global_step = tf.compat.v1.train.get_or_create_global_step()
    tf.compat.v2.keras.__internal__.backend.track_variable(global_step)
  clone = tf.compat.v2.keras.__internal__.models.clone_and_build_model(
      model, inputs, targets, custom_objects, compile_clone=compile_clone,
      in_place_reset=not model._is_graph_network,  # pylint: disable=protected-access
      optimizer_iterations=global_step, optimizer_config=optimizer_config)
  if weights is not None:
    clone._compile_weights_loss_and_weighted_metrics(  # pylint: disable=protected-access
        per_output_weights(weights, clone.output_names))
  return clone


def metric_ops(model: tf.keras.Model,
               names_map: Optional[Dict[str, str]]) -> Optional[Dict[str, Any]]:
  """The compiled metrics (not add_metric ones) by name, or None.

  Raises:
    ValueError: `names_map` misses a metric or names an unknown one.
  """
  if not getattr(model, "_compile_metrics", None):
    return None
  metrics = model._compile_metric_functions  # pylint: disable=protected-access
  if not names_map:
    return {m.name: m for m in metrics}
  known = {m.name for m in metrics}
  unmapped = known - set(names_map)
  if unmapped:
    raise ValueError(
        "Invalid `metric_names_map`. The following keras model metric "
        f'names:"{list(unmapped)}" do not exist in the `metric_names_map` '
        "dictionary")
  extra = set(names_map) - known
  if extra:
    raise ValueError(
        "Invalid `metric_names_map`. There are unexpected keys in the "
        f"`metric_names_map` dictionary. Expected keys: {list(known)}, "
        f"Received: {list(extra)}")
  return {names_map[m.name]: m for m in metrics}


def _object_saver_scaffold(model: tf.keras.Model) -> tf.compat.v1.train.Scaffold:
  """A Scaffold whose Saver writes the model's object-based names."""
  model._track_trackable(  # pylint: disable=protected-access
      tf.compat.v1.train.get_global_step(), GLOBAL_STEP_EDGE)
  graph_view = tf.compat.v2.__internal__.tracking.ObjectGraphView(model)
  saver = replacing_saver.Saver(
      var_list=graph_view.frozen_saveable_objects(), sharded=True)
  saver._object_restore_saver = object_checkpoint.frozen_saver(model)  # pylint: disable=protected-access
  return tf.compat.v1.train.Scaffold(saver=saver)


def _export_outputs(model: tf.keras.Model, predictions: Dict[str, Any],
                    export_outputs: Optional[Dict[str, Any]]) -> Dict[str, Any]:
  outputs = {_SERVING_KEY: PredictOutput(predictions)}
  if export_outputs is None:
    return outputs
  unknown = set(export_outputs) - set(model.output_names)
  if unknown:
    raise FormattedKeyError(
        "export_outputs names outputs the keras model does not have."
        f"\n\tExpected keys: {set(model.output_names)}"
        f"\n\texport_outputs keys: {set(export_outputs)}"
        f"\n\tMissed keys: {unknown}"
        "\nFix: key export_outputs by the model's output names.")
  for key, output_class in export_outputs.items():
    outputs[key] = output_class(predictions[key])
  return outputs


def keras_model_fn(model: tf.keras.Model, custom_objects: Any,
                   object_checkpoint_format: bool,
                   metric_names_map: Optional[Dict[str, str]],
                   export_outputs: Optional[Dict[str, Any]],
                   optimizer_config: Any) -> Callable[..., EstimatorSpec]:
  """The Estimator model_fn that clones and runs `model`."""

  def model_fn(features, labels, mode):
    if tf.inside_function():
      raise NeedsGraphEngine(
          "model_to_estimator's model_fn clones the Keras model with "
          "tf-keras's graph-mode (TF1) training machinery, which needs a TF1 "
          f"Session graph. {GRAPH_ENGINE_FIX}")
    clone = clone_in_graph(mode, model, custom_objects, features, labels,
                           optimizer_config)
    names = clone.output_names
    if tf.distribute.has_strategy():
      names = [re.sub(r"_\d$", "", name) for name in names]
    predictions = dict(zip(names, clone.outputs))
    loss = train_op = metrics = None
    if mode != ModeKeys.PREDICT:
      if mode == ModeKeys.TRAIN:
        clone._make_train_function()  # pylint: disable=protected-access
        train_op = clone.train_function.updates_op
      else:
        clone._make_test_function()  # pylint: disable=protected-access
      loss = clone.total_loss
      metrics = metric_ops(clone, metric_names_map)
    if (not model._is_graph_network and  # pylint: disable=protected-access
        getattr(model, "_original_attributes_cache", None) is not None):
      tf.compat.v2.keras.__internal__.models.in_place_subclassed_model_state_restoration(
          model)
    scaffold = (_object_saver_scaffold(clone) if object_checkpoint_format
                else None)
    return EstimatorSpec(
        mode=mode, predictions=predictions, loss=loss, train_op=train_op,
        eval_metric_ops=metrics,
        export_outputs=_export_outputs(clone, predictions, export_outputs),
        scaffold=scaffold)

  return model_fn
