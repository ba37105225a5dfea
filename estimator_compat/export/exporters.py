"""LatestExporter, FinalExporter, BestExporter for EvalSpec(exporters=...).

train_and_evaluate calls `export()` after each evaluation, with the path
model_dir/export/<name>; each exporter writes a timestamped SavedModel there
through Estimator.export_saved_model and keeps the newest `exports_to_keep`.
"""

import glob
import os
from typing import Any, Callable, Dict, Optional

import tensorflow as tf

from estimator_compat.front import tf_logging as logging
from estimator_compat.front.fn_args import fn_args
from estimator_compat.export.exporter import Exporter


def _loss_smaller(best_eval_result: Dict[str, Any],
                  current_eval_result: Dict[str, Any]) -> bool:
  """The default BestExporter comparison: a smaller `loss` is better."""
  for name, result in (("best_eval_result", best_eval_result),
                       ("current_eval_result", current_eval_result)):
    if not result or "loss" not in result:
      raise ValueError(
          f"{name} cannot be empty or no loss is found in it. Fix: evaluate "
          "a model_fn whose EVAL spec has a loss, or pass BestExporter a "
          "compare_fn for another metric.")
  return best_eval_result["loss"] > current_eval_result["loss"]


def _check_compare_fn_args(compare_fn: Callable[..., bool]) -> None:
  """BestExporter's compare_fn takes exactly the two eval results by name."""
  args = set(fn_args(compare_fn))
  fix = ("Fix: define it as compare_fn(best_eval_result, "
         "current_eval_result) returning True when the current one is better.")
  for needed in ("best_eval_result", "current_eval_result"):
    if needed not in args:
      raise ValueError(
          f"compare_fn ({compare_fn}) must include {needed} argument. {fix}")
  others = sorted(args - {"best_eval_result", "current_eval_result"})
  if others:
    raise ValueError(f"compare_fn ({compare_fn}) has following not expected "
                     f"args: {others} {fix}")


def _keep_newest(export_dir_base: str, exports_to_keep: Optional[int]) -> None:
  if not exports_to_keep:
    return
  exports = sorted(
      path for path in glob.glob(os.path.join(export_dir_base, "*"))
      if os.path.basename(path).isdigit())
  for path in exports[:-exports_to_keep]:
    logging.info("Removing old export %s.", path)
    tf.io.gfile.rmtree(path)


class _SavedModelExporter(Exporter):
  """Exports with Estimator.export_saved_model; shared by the three below."""

  def __init__(self, name: str, serving_input_receiver_fn: Callable[[], Any],
               assets_extra: Optional[Dict[str, str]], as_text: bool,
               exports_to_keep: Optional[int]):
    if not name:
      raise ValueError("An exporter needs a non-empty name.")
    if not callable(serving_input_receiver_fn):
      raise TypeError(
          f"{type(self).__name__}: serving_input_receiver_fn must be "
          f"callable, got {type(serving_input_receiver_fn).__name__}.")
    if exports_to_keep is not None and exports_to_keep <= 0:
      raise ValueError(
          "`exports_to_keep`, if provided, must be a positive number. Got "
          f"{exports_to_keep}. Fix: pass a count of at least 1, or None to "
          f"keep every export of {type(self).__name__} {name!r}.")
    self._name = name
    self._receiver_fn = serving_input_receiver_fn
    self._assets_extra = assets_extra
    self._as_text = as_text
    self._exports_to_keep = exports_to_keep

  @property
  def name(self) -> str:
    return self._name

  def _export(self, estimator, export_path: str, checkpoint_path: str) -> bytes:
    path = estimator.export_saved_model(
        export_path, self._receiver_fn, assets_extra=self._assets_extra,
        as_text=self._as_text, checkpoint_path=checkpoint_path)
    _keep_newest(export_path, self._exports_to_keep)
    return path


class LatestExporter(_SavedModelExporter):
  """Exports after every evaluation; keeps the newest `exports_to_keep`."""

  def __init__(self, name: str, serving_input_receiver_fn: Callable[[], Any],
               assets_extra: Optional[Dict[str, str]] = None,
               as_text: bool = False, exports_to_keep: Optional[int] = 5):
    super().__init__(name, serving_input_receiver_fn, assets_extra, as_text,
                     exports_to_keep)

  def export(self, estimator, export_path, checkpoint_path, eval_result,
             is_the_final_export):
    del eval_result, is_the_final_export
    return self._export(estimator, export_path, checkpoint_path)


class FinalExporter(_SavedModelExporter):
  """Exports once, after the final evaluation."""

  def __init__(self, name: str, serving_input_receiver_fn: Callable[[], Any],
               assets_extra: Optional[Dict[str, str]] = None,
               as_text: bool = False):
    super().__init__(name, serving_input_receiver_fn, assets_extra, as_text,
                     exports_to_keep=None)

  def export(self, estimator, export_path, checkpoint_path, eval_result,
             is_the_final_export):
    del eval_result
    if not is_the_final_export:
      return None
    return self._export(estimator, export_path, checkpoint_path)


class BestExporter(_SavedModelExporter):
  """Exports when an evaluation beats the best one so far.

  As the Estimator 2.15: the first call of `export()` always exports; each
  later one exports when `compare_fn` says the current result beats the best
  so far. When the estimator's model_dir differs from the last call's, the
  best so far is re-read from the eval summaries there
  (`event_file_pattern`).
  """

  def __init__(self, name: str = "best_exporter",
               serving_input_receiver_fn: Optional[Callable[[], Any]] = None,
               event_file_pattern: str = "eval/*.tfevents.*",
               compare_fn: Callable[..., bool] = _loss_smaller,
               assets_extra: Optional[Dict[str, str]] = None,
               as_text: bool = False, exports_to_keep: Optional[int] = 5):
    super().__init__(name, serving_input_receiver_fn, assets_extra, as_text,
                     exports_to_keep)
    if compare_fn is None:
      raise ValueError("`compare_fn` must not be None. Fix: pass a function "
                       "of best_eval_result and current_eval_result.")
    _check_compare_fn_args(compare_fn)
    self._compare_fn = compare_fn
    self._event_file_pattern = event_file_pattern
    self._model_dir: Optional[str] = None
    self._best: Optional[Dict[str, Any]] = None
    self._has_exported = False

  def _best_from_events(self, model_dir: str) -> Optional[Dict[str, Any]]:
    """The best eval result among the summaries matching the pattern."""
    best = None
    pattern = os.path.join(model_dir, self._event_file_pattern)
    for path in tf.io.gfile.glob(pattern):
      for event in tf.compat.v1.train.summary_iterator(path):
        values = {v.tag: v.simple_value for v in event.summary.value
                  if v.HasField("simple_value")}
        if values and (best is None or self._compare_fn(best, values)):
          best = values
    return best

  def export(self, estimator, export_path, checkpoint_path, eval_result,
             is_the_final_export):
    del is_the_final_export
    if self._event_file_pattern and estimator.model_dir != self._model_dir:
      self._model_dir = estimator.model_dir
      self._best = self._best_from_events(self._model_dir)
    if (self._best is None or not self._has_exported or self._compare_fn(
        best_eval_result=self._best, current_eval_result=eval_result)):
      self._best = eval_result
      result = self._export(estimator, export_path, checkpoint_path)
      self._has_exported = True
      return result
    return None
