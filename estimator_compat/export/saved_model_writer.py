"""Writes SavedModels from a checkpoint, as Estimator.export_saved_model did.

Export always builds a TF1 graph: legacy serving_input_receiver_fns are graph
code, and checkpoints are the same whichever engine wrote them. The model_fn
is called on the receiver's features, the newest (or given) checkpoint is
restored by name, and `tf.compat.v1.saved_model.Builder` writes one
MetaGraph per mode into a temporary directory that is renamed to a
timestamped one when complete.
"""

import os
from typing import Any, Callable, Dict, Optional

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.saved_model import model_utils
from tensorflow.python.saved_model.model_utils import export_utils

from estimator_compat.checkpoints import checkpoint_files
from estimator_compat.checkpoints import checkpoint_reading
from estimator_compat.checkpoints import scaffold_savers
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import ModelSetup, call_model_fn

_TAGS = {
    ModeKeys.PREDICT: [tf.saved_model.SERVING],
    ModeKeys.TRAIN: [tf.saved_model.TRAINING],
    ModeKeys.EVAL: ["eval"],
}
# `export_lib.EXPORT_TAG_MAP`: the Estimator re-exported TensorFlow's own map
# of each mode's MetaGraph tags (the same tags as _TAGS).
EXPORT_TAG_MAP = model_utils.EXPORT_TAG_MAP


def _add_meta_graph(builder, setup: ModelSetup, mode: str,
                    receiver_fn: Callable[[], Any], checkpoint_path: str,
                    save_variables: bool, strip_default_attrs: bool) -> None:
  with tf.Graph().as_default() as graph:
    tf.compat.v1.set_random_seed(setup.config.tf_random_seed)
    tf.compat.v1.train.get_or_create_global_step()
    receiver = receiver_fn()
    if not hasattr(receiver, "receiver_tensors"):
      raise TypeError(
          f"serving_input_receiver_fn must return a ServingInputReceiver, got "
          f"{type(receiver).__name__}. Fix: return "
          "tf.estimator.export.ServingInputReceiver(features, "
          "receiver_tensors).")
    spec = call_model_fn(setup, receiver.features,
                         getattr(receiver, "labels", None), mode,
                         exporting=True)
    try:
      export_outputs = export_utils.export_outputs_for_mode(
          mode=spec.mode, serving_export_outputs=spec.export_outputs,
          predictions=spec.predictions, loss=spec.loss,
          metrics=spec.eval_metric_ops)
    except ValueError as e:
      raise ValueError(
          f"EstimatorSpec.export_outputs cannot be exported: {e} Fix: name "
          "one of them 'serving_default' "
          "(tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY), or give only "
          "one.") from e
    signature_def_map = export_utils.build_all_signature_defs(
        receiver.receiver_tensors, export_outputs,
        getattr(receiver, "receiver_tensors_alternatives", None),
        serving_only=(mode == ModeKeys.PREDICT))
    saver = scaffold_savers.custom_saver(spec.scaffold)
    if saver is None:
      # Shapes unchecked: the Estimator's Saver restored a value of another
      # shape as it was (a serving input narrower than the training one).
      checkpoint_reading.check_fits(checkpoint_path,
                                    tf.compat.v1.global_variables(),
                                    shapes=False)
      saver = tf.compat.v1.train.Saver(sharded=True)
    local_init_op = (spec.scaffold.local_init_op or
                     tf.compat.v1.train.Scaffold.default_local_init_op())
    with tf.compat.v1.Session(graph=graph,
                              config=setup.config.session_config) as session:
      saver.restore(session, checkpoint_path)
      kwargs = dict(tags=_TAGS[mode], signature_def_map=signature_def_map,
                    assets_collection=tf.compat.v1.get_collection(
                        tf.compat.v1.GraphKeys.ASSET_FILEPATHS),
                    main_op=local_init_op,
                    strip_default_attrs=strip_default_attrs)
      if save_variables:
        builder.add_meta_graph_and_variables(session, saver=saver, **kwargs)
      else:
        builder.add_meta_graph(saver=saver, **kwargs)


def export_all_saved_models(setup: ModelSetup, export_dir_base: str,
                            input_receiver_fn_map: Dict[str, Callable],
                            assets_extra: Optional[Dict[str, str]],
                            as_text: bool,
                            checkpoint_path: Optional[str],
                            strip_default_attrs: bool = True) -> bytes:
  """Exports one SavedModel with a MetaGraph per mode; returns its path.

  `strip_default_attrs=False` (only the TF1 `export_savedmodel`) keeps the
  ops' default-valued attributes in the graphs.

  Raises:
    ValueError: no checkpoint, an unknown mode, or a checkpoint that does not
      fit the model.
  """
  unknown = sorted(set(input_receiver_fn_map) - set(_TAGS))
  if unknown:
    raise ValueError(f"Unknown mode(s) {unknown}; use tf.estimator.ModeKeys.")
  checkpoint_path = checkpoint_files.usable_checkpoint(checkpoint_path,
                                                      setup.model_dir)
  if not checkpoint_path and setup.warm_start:
    # As the Estimator: an untrained model exports its warm-start checkpoint.
    checkpoint_path = setup.warm_start.ckpt_to_initialize_from
    if tf.io.gfile.isdir(checkpoint_path):
      checkpoint_path = tf.train.latest_checkpoint(checkpoint_path)
  if not checkpoint_path:
    raise ValueError(
        f"Couldn't find trained model at {setup.model_dir}. Fix: train the "
        "Estimator first, or pass checkpoint_path.")
  export_dir = export_utils.get_timestamped_export_dir(export_dir_base)
  temp_dir = export_utils.get_temp_export_dir(export_dir)
  builder = tf.compat.v1.saved_model.Builder(temp_dir)
  try:
    save_variables = True
    for mode in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
      if mode in input_receiver_fn_map:
        _add_meta_graph(builder, setup, mode, input_receiver_fn_map[mode],
                        checkpoint_path, save_variables, strip_default_attrs)
        save_variables = False
    builder.save(as_text)
  except Exception:
    if tf.io.gfile.exists(temp_dir):  # Leave no half-written export behind.
      tf.io.gfile.rmtree(temp_dir)
    raise
  if assets_extra:
    extra = os.path.join(tf.compat.as_bytes(temp_dir),
                         tf.compat.as_bytes("assets.extra"))
    for dest, source in assets_extra.items():
      target = os.path.join(extra, tf.compat.as_bytes(dest))
      tf.io.gfile.makedirs(os.path.dirname(target))
      tf.io.gfile.copy(source, target)
  tf.io.gfile.rename(temp_dir, export_dir)
  return export_dir
