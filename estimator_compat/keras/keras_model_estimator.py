"""`tf.keras.estimator.model_to_estimator`, after `install()`.

tf-keras's `model_to_estimator` / `model_to_estimator_v2` import
`tensorflow_estimator.python.estimator.keras_lib` and call its
`model_to_estimator`; module_paths registers this module under that path.
As tensorflow-estimator 2.15 did, it checks the model, converts a new
(v2) tf-keras optimizer to its legacy version, writes the model's current
weights to `model_dir/keras/keras_model.ckpt` (object-based names with
checkpoint_format='checkpoint', the Saver's names with 'saver') and
returns an Estimator warm-started from there whose model_fn clones the
model (keras_model_estimator_fn). Calls run on the graph engine.
"""

import os
from typing import Any, Dict, Optional

import tensorflow as tf

from estimator_compat.front import tf_logging as logging
from estimator_compat.estimator import (
    Estimator, maybe_overwrite_model_dir_and_session_config)
from estimator_compat.keras.keras_model_estimator_fn import (GLOBAL_STEP_EDGE,
                                                       FormattedKeyError,
                                                       clone_in_graph,
                                                       keras_model_fn)
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.run_config import RunConfig

_CHECKPOINT_NAME = "keras_model.ckpt"
# keras_lib's public names (tests catch FormattedKeyError by that path).
__all__ = ["FormattedKeyError", "model_to_estimator"]


def _check_subclassed_model(model: tf.keras.Model, custom_objects: Any) -> None:
  """A subclassed model must rebuild from its config (it is cloned).

  Raises:
    ValueError: it does not implement get_config/from_config.
  """
  if model._is_graph_network or isinstance(model, tf.keras.Sequential):  # pylint: disable=protected-access
    return
  try:
    with tf.keras.utils.CustomObjectScope(custom_objects or {}):
      model.__class__.from_config(model.get_config())
  except NotImplementedError:
    raise ValueError(
        "Subclassed `Model`s passed to `model_to_estimator` must implement "
        "`Model.get_config` and `Model.from_config`. Fix: implement both, "
        "or build the model with the Functional or Sequential API."
    ) from None


def _legacy_optimizer(model: tf.keras.Model) -> None:
  """Replaces a new (v2) tf-keras optimizer by its legacy version."""
  if isinstance(model.optimizer, tf.keras.optimizers.experimental.Optimizer):
    logging.warning(
        "You are using `tf.keras.optimizers.experimental.Optimizer` in TF "
        "estimator, which only supports `tf.keras.optimizers.legacy."
        "Optimizer`. Automatically converting your optimizer to "
        "`tf.keras.optimizers.legacy.Optimizer`.")
    model.optimizer = (
        tf.keras.__internal__.optimizers.convert_to_legacy_optimizer(
            model.optimizer))


def _weights_initialized(model: tf.keras.Model) -> bool:
  """True once the model's weights hold values (always when eager)."""
  if tf.compat.v1.executing_eagerly_outside_functions():
    return True
  return any(hasattr(weight, "_keras_initialized")
             for layer in model.layers for weight in layer.weights)


def _use_session_config(model: tf.keras.Model, config: RunConfig) -> None:
  """A model built in a TF1 graph gets a Keras session with session_config."""
  if _weights_initialized(model):
    if config.session_config.HasField("gpu_options"):
      logging.warning(
          "The Keras backend session has already been set. The "
          "_session_config passed to model_to_estimator will not be used.")
    return
  tf.compat.v1.keras.backend.set_session(
      tf.compat.v1.Session(config=config.session_config))


def _optimizer_config(model: tf.keras.Model) -> Any:
  try:
    if isinstance(model.optimizer, (tuple, list)):
      return [optimizer.get_config() for optimizer in model.optimizer]
    return model.optimizer.get_config()
  except (NotImplementedError, AttributeError):
    return None


def _write_first_checkpoint(model: tf.keras.Model, custom_objects: Any,
                            config: RunConfig, object_format: bool) -> str:
  """Writes the model's weights to model_dir/keras/ once; returns the path."""
  keras_dir = os.path.join(config.model_dir, "keras")
  existing = tf.train.latest_checkpoint(keras_dir)
  if existing:
    return existing
  weights = model.get_weights() if _weights_initialized(model) else None
  tf.io.gfile.makedirs(keras_dir)
  path = os.path.join(keras_dir, _CHECKPOINT_NAME)
  with tf.Graph().as_default():
    tf.compat.v1.random.set_random_seed(config.tf_random_seed)
    tf.compat.v1.train.create_global_step()
    clone = clone_in_graph(ModeKeys.TRAIN, model, custom_objects)
    clone._make_train_function()  # pylint: disable=protected-access
    with tf.compat.v1.Session(config=config.session_config) as session:
      if weights:
        clone.set_weights(weights)
      tf.compat.v2.keras.__internal__.backend.initialize_variables(session)
      if object_format:
        clone._track_trackable(  # pylint: disable=protected-access
            tf.compat.v1.train.get_global_step(), GLOBAL_STEP_EDGE)
        clone.save_weights(path)
      else:
        tf.compat.v1.train.Saver().save(session, path)
  return path


def model_to_estimator(keras_model: Optional[tf.keras.Model] = None,
                       keras_model_path: Optional[str] = None,
                       custom_objects: Optional[Dict[str, Any]] = None,
                       model_dir: Optional[str] = None,
                       config: Optional[RunConfig] = None,
                       checkpoint_format: Optional[str] = None,
                       use_v2_estimator: bool = False,
                       metric_names_map: Optional[Dict[str, str]] = None,
                       export_outputs: Optional[Dict[str, Any]] = None
                       ) -> Estimator:
  """An Estimator that trains, evaluates and predicts with a Keras model.

  Args:
    keras_model: a compiled tf-keras model (or give keras_model_path).
    keras_model_path: a saved compiled model (HDF5 or SavedModel).
    custom_objects: custom classes/functions needed to clone (and load) it.
    model_dir: where checkpoints go (else config.model_dir, else a temp dir).
    config: a RunConfig.
    checkpoint_format: 'checkpoint' (object-based names, the default) or
      'saver' (the Saver's variable names).
    use_v2_estimator: accepted; estimator_compat has one Estimator class.
    metric_names_map: {Keras metric name: eval metric name}.
    export_outputs: {model output name: ExportOutput class} added to the
      default `serving_default` PredictOutput.

  Returns:
    The Estimator.

  Raises:
    ValueError: no model or both, an uncompiled model, a subclassed model
      with checkpoint_format='checkpoint', or an unknown format; a Google
      Cloud Storage path (not downloaded here).
  """
  del use_v2_estimator  # One Estimator class serves both APIs.
  if not (keras_model or keras_model_path):
    raise ValueError(
        "Either `keras_model` or `keras_model_path` needs to be provided.")
  if keras_model and keras_model_path:
    raise ValueError(
        "Please specity either `keras_model` or `keras_model_path`, but not "
        "both.")
  if keras_model:
    _check_subclassed_model(keras_model, custom_objects)
  config = maybe_overwrite_model_dir_and_session_config(config, model_dir)
  if keras_model is None:
    if (keras_model_path.startswith("gs://") or
        "storage.googleapis.com" in keras_model_path):
      raise ValueError(
          f"keras_model_path {keras_model_path!r} is in Google Cloud Storage, "
          "which estimator_compat does not download. Fix: copy the file to "
          "a local path (e.g. gsutil cp) and pass that path.")
    logging.info("Loading models from %s", keras_model_path)
    keras_model = tf.keras.models.load_model(keras_model_path,
                                             custom_objects=custom_objects)
  else:
    logging.info("Using the Keras model provided.")
  if checkpoint_format in (None, "checkpoint"):
    if not (keras_model._is_graph_network or  # pylint: disable=protected-access
            isinstance(keras_model, tf.keras.Sequential)):
      raise ValueError(
          "Object-based checkpoints are currently not supported with "
          "subclassed models. Fix: checkpoint_format='saver'.")
    object_format = True
  elif checkpoint_format == "saver":
    object_format = False
  else:
    raise ValueError(
        'Checkpoint format must be one of "checkpoint" or "saver". Got '
        f"{checkpoint_format}")
  if not getattr(keras_model, "optimizer", None):
    raise ValueError(
        "The given keras model has not been compiled yet. Please compile the "
        "model with `model.compile()` before calling `model_to_estimator()`.")
  _legacy_optimizer(keras_model)
  model_fn = keras_model_fn(keras_model, custom_objects, object_format,
                            metric_names_map, export_outputs,
                            _optimizer_config(keras_model))
  _use_session_config(keras_model, config)
  warm_start = None
  if keras_model._is_graph_network and config.is_chief:  # pylint: disable=protected-access
    warm_start = _write_first_checkpoint(keras_model, custom_objects, config,
                                         object_format)
  elif keras_model.built:
    logging.warning(
        "You are creating an Estimator from a Keras model manually "
        "subclassed from `Model`, that was already called on some inputs "
        "(and thus already had weights). We are currently unable to preserve "
        "the model's state (its weights) as part of the estimator in this "
        "case. Be warned that the estimator has been created using a freshly "
        "initialized version of your model.\nNote that this doesn't affect "
        "the state of the model instance you passed as `keras_model` "
        "argument.")
  return Estimator(model_fn, config=config, warm_start_from=warm_start)
