"""Reading legacy-named checkpoints: latest one, step, and a fit check."""

from typing import Iterable, Optional

import tensorflow as tf


def latest_checkpoint(model_dir: Optional[str]) -> Optional[str]:
  """Path prefix of the newest checkpoint in `model_dir`, or None."""
  if not model_dir:
    return None
  return tf.train.latest_checkpoint(model_dir)


def global_step_of(checkpoint_path: Optional[str]) -> int:
  """The `global_step` stored in a checkpoint (0 when there is none)."""
  if not checkpoint_path:
    return 0
  reader = tf.train.load_checkpoint(checkpoint_path)
  if not reader.has_tensor("global_step"):
    return 0
  return int(reader.get_tensor("global_step"))


class MissingVariablesError(tf.errors.NotFoundError, ValueError):
  """A checkpoint lacks variables the model builds.

  TF 2.15's Saver failed the restore with `NotFoundError` (code and tests
  catch it); it is a ValueError too, as this check's error was before.
  """

  def __init__(self, message: str):
    super().__init__(None, None, message)


# TF 2.15's restore error began so, then gave the Saver's own error.
_TF_RESTORE_FAILED = (
    "Restoring from checkpoint failed. This is most likely due to a Variable "
    "name or other graph key that is missing from the checkpoint. Please "
    "ensure that you have not altered the graph expected based on the "
    "checkpoint. Original error:\n\n")


def _saved_name_and_shape(variable: tf.Variable):
  info = getattr(variable, "_save_slice_info", None)
  if info is not None:
    return info.full_name, list(info.full_shape)
  if variable.shape.rank is None:
    # validate_shape=False (KMeans's `clusters`): any stored shape restores.
    return variable.name.split(":")[0], None
  return variable.name.split(":")[0], variable.shape.as_list()


def check_fits(checkpoint_path: str, variables: Iterable[tf.Variable],
               shapes: bool = True) -> None:
  """Fails, naming the variable, if a checkpoint cannot restore the model.

  Runs before a session exists, so nothing on disk is touched on failure.

  Args:
    checkpoint_path: the checkpoint to restore.
    variables: the model's variables.
    shapes: also refuse a variable stored with another shape. False (export,
      as the Estimator's): the stored value is restored as it is, with a
      warning.

  Raises:
    MissingVariablesError: (a NotFoundError and a ValueError) a variable is
      missing from the checkpoint.
    ValueError: a variable has another shape in the checkpoint.
  """
  stored = tf.train.load_checkpoint(checkpoint_path).get_variable_to_shape_map()
  missing = []
  for variable in variables:
    name, shape = _saved_name_and_shape(variable)
    if name not in stored:
      missing.append(name)
      continue
    if shape is None:
      continue
    if list(stored[name]) != shape and not shapes:
      tf.compat.v1.logging.warning(
          "Checkpoint %s holds variable %r with shape %s, but the model builds "
          "it with shape %s; restoring the stored value as it is.",
          checkpoint_path, name, list(stored[name]), shape)
    elif list(stored[name]) != shape:
      raise ValueError(
          f"Checkpoint {checkpoint_path} holds variable {name!r} with shape "
          f"{list(stored[name])}, but the model builds it with shape {shape}. "
          "Nothing was changed on disk. Fix: use a new model_dir for the new "
          "model, or restore the model that wrote this checkpoint (a "
          "warm_start_from setting can carry over the variables that fit).")
  if missing:
    raise MissingVariablesError(
        f"{_TF_RESTORE_FAILED}Key {sorted(missing)[0]} not found in "
        f"checkpoint\n\n"
        f"Checkpoint {checkpoint_path} lacks variable(s) the model builds: "
        f"{sorted(missing)[:10]}. Nothing was changed on disk. Fix: use a new "
        "model_dir for the new model, or keep the variable names of the model "
        "that wrote this checkpoint.")
