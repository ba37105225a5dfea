"""Legacy-named checkpoints for eagerly held variables.

A name-based `tf.compat.v1.train.Saver` over the captured variables writes
and reads exactly what the graph engine (and the real Estimator) write:
`model.ckpt-N.{index,data-*}` under legacy variable names, the `checkpoint`
state file, `keep_checkpoint_max`; beside them the `.meta` and `graph.pbtxt`
files hold the traced step graph.
"""

import logging as logging_lib
import os
import re
from typing import Any, Dict, Optional, Sequence, Set

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.lib.io import file_io
from tensorflow.python.trackable import base as trackable
from tensorflow.python.training.saving import saveable_object_util

from estimator_compat.checkpoints import checkpoint_files
from estimator_compat.checkpoints import checkpoint_reading
from estimator_compat.front import front_checks
from estimator_compat.checkpoints import rotation_record
from estimator_compat.front import tf_logging as logging
from estimator_compat.engines.function import checkpoint_initializers
from estimator_compat.engines.function import graph_text
from estimator_compat.engines.function import variables as variables_lib
from estimator_compat.front.model_fn_call import ModelSetup


class _SkipEagerSaverWarning(logging_lib.Filter):
  """Hides the warning an eager Saver logs about name-based lookups.

  Names are exactly what we rely on here (legacy checkpoints), and the
  warning would be printed at every train/evaluate/predict call.
  """

  def filter(self, record):
    return "Saver is deprecated" not in record.getMessage()


def make_saver(setup: ModelSetup, variables: Dict[str, tf.Variable],
               present: Optional[Set[str]] = None):
  """A name-based Saver over eagerly held variables, as the engine writes.

  `present`: to restore, the names the checkpoint holds (see
  `_by_checkpoint_name`).
  """
  config = setup.config
  warning_filter = _SkipEagerSaverWarning()
  tf.get_logger().addFilter(warning_filter)
  try:
    return _make_saver(config, variables, present)
  finally:
    tf.get_logger().removeFilter(warning_filter)


def _first_copies(variables: Dict[str, tf.Variable]) -> Dict[str, tf.Variable]:
  """Each variable, or the first copy of a distributed (mirrored) one.

  An eager Saver handles plain resource variables only. Mirrored copies are
  equal, so the first one is what a checkpoint holds; after a restore,
  `sync_copies` copies it to the others.
  """
  return {name: getattr(v, "values", (v,))[0] for name, v in variables.items()}


def sync_copies(variables: Dict[str, tf.Variable]) -> None:
  """Gives every copy of a distributed variable its first copy's value."""
  for variable in variables.values():
    copies = getattr(variable, "values", None)
    if copies and len(copies) > 1:
      for copy in copies[1:]:
        copy.assign(copies[0].read_value())


def _replica_copies(variables: Dict[str, tf.Variable]) -> Dict[str, Any]:
  """`name/replica_K` -> copy K of each variable saved per replica."""
  out = {}
  for name, variable in variables.items():
    if getattr(variable, variables_lib.PER_REPLICA_SAVE, False):
      for k, copy in enumerate(variable.values[1:], 1):
        out[f"{name}/replica_{k}"] = copy
  return out


_ONE_PROCESS_MIRRORED = (tf.distribute.MirroredStrategy,
                         tf.compat.v1.distribute.MirroredStrategy)


def _on_read_saveable(name: str, variable: Any) -> Any:
  """TF's own saveable for a sync-on-read variable's copies; else None.

  A variable made with `synchronization=ON_READ` under a MirroredStrategy
  (a batch norm's moving mean and variance) holds one copy per replica, each
  updated from its replica's batch. The Estimator's TF1 Saver wrote their
  aggregate (the mean, for MEAN), and restored it into every copy; the first
  copy alone would be one replica's statistics. A variable saved copy by
  copy (`PER_REPLICA_SAVE`) keeps that. Only a MirroredStrategy's copies
  (one process): a multi-worker strategy would reduce across workers, which
  a save by the chief alone cannot do.
  """
  copies = getattr(variable, "values", None)
  if (not copies or len(copies) < 2 or
      getattr(variable, variables_lib.PER_REPLICA_SAVE, False) or
      variable.synchronization != tf.VariableSynchronization.ON_READ or
      not isinstance(getattr(variable, "distribute_strategy", None),
                     _ONE_PROCESS_MIRRORED)):
    return None
  factories = variable._gather_saveables_for_checkpoint()  # pylint: disable=protected-access
  return factories[trackable.VARIABLE_VALUE_KEY](name=name)


def check_saveable_across_workers(variables: Dict[str, tf.Variable]) -> None:
  """Refuses sync-on-read variables whose copies live on other workers too.

  Under a multi-worker strategy a batch norm's moving mean and variance have
  one copy per replica on every worker. The Estimator's Saver wrote their
  aggregate over all workers' copies (each worker took part in the save);
  here only the chief saves, so the checkpoint would hold its own copies'
  values: a silent difference. Called on every worker before anything is
  restored or written.

  Raises:
    ValueError: such a variable, named, with the fix.
  """
  for name, variable in sorted(variables.items()):
    copies = getattr(variable, "values", None)
    strategy = getattr(variable, "distribute_strategy", None)
    if (not copies or strategy is None or
        getattr(variable, variables_lib.PER_REPLICA_SAVE, False) or
        variable.synchronization != tf.VariableSynchronization.ON_READ or
        variable.aggregation == tf.VariableAggregation.ONLY_FIRST_REPLICA or
        len(copies) >= strategy.num_replicas_in_sync):
      continue
    raise ValueError(
        f"Variable {name!r} is synchronized on read (aggregation "
        f"{variable.aggregation.name}; a batch norm's moving statistics are) "
        f"under a strategy of {strategy.num_replicas_in_sync} replicas on "
        "several workers. The Estimator saved its aggregate over every "
        "worker's copies; estimator_compat saves on the chief only and "
        "would write the chief's own copies instead. Fix: train this model "
        "on one worker (MirroredStrategy over its devices), or without the "
        "strategy; docs/known_differences.md, "
        "multi-worker-sync-on-read-refused.")


def _by_checkpoint_name(variables: Dict[str, tf.Variable],
                        present: Optional[Set[str]] = None) -> Dict[str, Any]:
  """Saver var_list: slices of one partitioned variable grouped by its name.

  `present`: the names a checkpoint to restore holds; a per-replica copy it
  lacks (written on one device) is left to `sync_copies`.
  """
  out: Dict[str, Any] = {
      name: copy for name, copy in _replica_copies(variables).items()
      if present is None or name in present}
  for name, variable in _first_copies(variables).items():
    info = getattr(variable, "_save_slice_info", None)
    on_read = _on_read_saveable(name, variables[name])
    if on_read is not None:
      out[name] = on_read
    elif info is None:
      out[name] = variable
    else:
      # The Saver's own slice path reads `variable.op`, which eager
      # variables lack; a saveable per slice says the same thing.
      resource = getattr(variable, "_v", variable)  # PS AggregatingVariable
      out.setdefault(info.full_name, []).append(
          saveable_object_util.ResourceVariableSaveable(
              resource, info.spec, info.full_name))
  return out


def _make_saver(config, variables: Dict[str, tf.Variable],
                present: Optional[Set[str]] = None):
  return tf.compat.v1.train.Saver(
      var_list=_by_checkpoint_name(variables, present),
      sharded=False,  # Same file names; sharded saving needs graph mode.
      max_to_keep=config.keep_checkpoint_max,
      keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
      save_relative_paths=True)


def restore_or_warm_start(setup: ModelSetup, variables: Dict[str, tf.Variable],
                          checkpoint: Optional[str]) -> None:
  """Restores `checkpoint` (after a fit check) or warm-starts, by name."""
  if checkpoint:
    checkpoint_reading.check_fits(checkpoint, variables.values())
    present = {name for name, _ in tf.train.list_variables(checkpoint)}
    make_saver(setup, variables, present).restore(None, checkpoint)
  else:
    # The variables are initialized, as TF1's init op did: model_fn's
    # init_from_checkpoint first, a warm start after it (so it wins).
    checkpoint_initializers.run(variables.values())
    if setup.warm_start is not None:
      warm_start(setup.warm_start, variables)
  sync_copies(variables)


class _OnlyVocabVariables(list):
  """The selected variables, for `vars_to_warm_start=None`.

  `tf.compat.v1.train.warm_start` takes the variables themselves as a list;
  a list that is false keeps its meaning of None: of the TRAINABLE_VARIABLES,
  warm-start only those named in var_name_to_vocab_info.
  """

  def __bool__(self):
    return False


def _selected(selectors: Any, variables: Dict[str, tf.Variable]) -> Any:
  """What the TF1 collections gave warm_start for `vars_to_warm_start`.

  A regex (or None) is matched against the names (`x:0`) of the trainable
  variables, a list of regexes against those of all the checkpointed
  (global) ones, as `tf.compat.v1.get_collection(key, scope)` did.
  """
  copies = [getattr(v, "_v", v)  # PS AggregatingVariable
            for v in _first_copies(variables).values()]
  if isinstance(selectors, str) or selectors is None:
    logging.info("Warm-starting variables only in TRAINABLE_VARIABLES.")
    chosen = [v for v in copies if v.trainable and (
        selectors is None or re.match(selectors, v.name))]
    return _OnlyVocabVariables(chosen) if selectors is None else chosen
  if isinstance(selectors, list) and all(
      isinstance(s, str) for s in selectors):
    return [v for pattern in selectors for v in copies
            if re.match(pattern, v.name)]
  return selectors  # warm_start's own error names what it accepts.


def warm_start(settings: Any, variables: Dict[str, tf.Variable]) -> None:
  """`tf.compat.v1.train.warm_start` on eagerly held variables.

  TensorFlow's own warm start (vocabulary remapping, renames, partitions,
  its errors) runs eagerly on the variables the TF1 collections would have
  held.
  """
  tf.compat.v1.train.warm_start(
      settings.ckpt_to_initialize_from,
      vars_to_warm_start=_selected(settings.vars_to_warm_start, variables),
      var_name_to_vocab_info=settings.var_name_to_vocab_info,
      var_name_to_prev_var_name=settings.var_name_to_prev_var_name)


class CheckpointWriter:
  """Saves at the start step, on a step/seconds cadence, and at the end."""

  def __init__(self, setup: ModelSetup, variables: Dict[str, tf.Variable],
               global_step: tf.Variable, graph: tf.Graph,
               listeners: Sequence[Any]):
    config = setup.config
    self._model_dir = setup.model_dir
    # Only the chief writes model_dir (other multi-worker tasks train and
    # write nothing there).
    self._enabled = bool(config.save_checkpoints_steps or
                         config.save_checkpoints_secs) and config.is_chief
    if listeners and not self._enabled and config.is_chief:
      raise ValueError(front_checks.NO_SAVER_FOR_LISTENERS)
    # With neither cadence set (no checkpoints, as the Estimator allowed)
    # there is nothing to time.
    self._timer = tf.compat.v1.train.SecondOrStepTimer(
        every_secs=config.save_checkpoints_secs,
        every_steps=config.save_checkpoints_steps) if (
            config.save_checkpoints_steps or
            config.save_checkpoints_secs) else None
    self._every_steps = config.save_checkpoints_steps
    self._saver = make_saver(setup, variables)
    if self._enabled:  # keep_checkpoint_max across runs, as in TF1.
      checkpoint_files.recover_kept(self._saver, self._model_dir)
    self._global_step = global_step
    self._listeners = list(listeners)
    self._graph_def = graph.as_graph_def(add_shapes=True)
    self._save_graph_def = config.checkpoint_save_graph_def
    self._meta: Optional[bytes] = None  # The serialized .meta file.
    self._last_saved: Optional[int] = None
    if self._enabled:
      logging.info("Create CheckpointSaverHook.")

  def begin(self) -> None:
    """Starts listeners; saves the start step and graph.pbtxt."""
    if not self._enabled:
      return
    for listener in self._listeners:
      listener.begin()
    if self._save_graph_def:
      graph_text.write_graph_text(self._graph_def, self._model_dir)
    step = int(self._global_step.numpy())
    self._save(step)
    self._timer.update_last_triggered_step(step)

  def due(self, step: int) -> bool:
    """True if after_step(step) would save."""
    return self._enabled and self._timer.should_trigger_for_step(step)

  def steps_to_next(self, step: int) -> Optional[int]:
    """Steps from `step` until the step cadence saves; None: by time only."""
    if not self._enabled or not self._every_steps:
      return None
    last = self._timer.last_triggered_step()
    return 1 if last is None else max(1, last + self._every_steps - step)

  def after_step(self, step: int) -> bool:
    """Saves when the cadence says so; True if a listener asked to stop."""
    if self._enabled and self._timer.should_trigger_for_step(step):
      self._timer.update_last_triggered_step(step)
      return self._save(step)
    return False

  def end(self) -> None:
    if not self._enabled:
      return
    step = int(self._global_step.numpy())
    if step != self._last_saved:
      self._save(step)
    for listener in self._listeners:
      listener.end(None, step)

  def _save(self, step: int) -> bool:
    logging.info("Calling checkpoint listeners before saving checkpoint %d...",
                 step)
    for listener in self._listeners:
      listener.before_save(None, step)
    logging.info("Saving checkpoints for %d into %s.", step,
                 os.path.join(self._model_dir, "model.ckpt"))
    prefix = os.path.join(self._model_dir, "model.ckpt")
    # Names the checkpoint this save's rotation deletes, so that the next
    # run finishes the rotation if a kill cuts it short (rotation_record.py).
    rotation_record.record(self._model_dir, rotation_record.victim(
        self._saver, f"{prefix}-{step}"))
    path = self._saver.save(None, prefix, global_step=step,
                            write_meta_graph=False)
    rotation_record.clear(self._model_dir)
    if self._save_graph_def:
      if self._meta is None:  # The same graph at every save: made once.
        meta = tf.compat.v1.MetaGraphDef(graph_def=self._graph_def)
        meta.meta_info_def.tensorflow_version = tf.__version__
        self._meta = meta.SerializeToString()
      # Through a temporary name, renamed over: a symlink in its place is
      # replaced, never followed out of the model_dir (as the Saver's own
      # meta graph writer does).
      file_io.atomic_write_string_to_file(path + ".meta", self._meta)
    self._last_saved = step
    logging.info("Calling checkpoint listeners after saving checkpoint %d...",
                 step)
    stop = False
    for listener in self._listeners:
      if listener.after_save(None, step):
        logging.info("A CheckpointSaverListener requested that training be "
                     "stopped. listener: %s", listener)
        stop = True
    return stop
