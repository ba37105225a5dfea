"""What a migration check runs: a legacy program's model_fn and input_fns.

A program is named on the command line as `pkg.mod:attr` (an importable
module) or `path/to/file.py:attr` (a script). Legacy scripts often train at
import time (the seed program calls `estimator.train` at the bottom), so
while a program's module is imported for a check, the Estimator's run
methods are skipped: the module's definitions load, nothing trains.

Runs on TF 2.15 + tensorflow-estimator as well as on estimator_compat.
"""

import contextlib
import dataclasses
import importlib
import importlib.util
import json
import os
import sys
from typing import Any, Callable, Dict, Iterator, Optional

from absl import logging

_RUN_METHODS = ("train", "evaluate", "predict", "export_saved_model",
                "export_savedmodel")


@dataclasses.dataclass(frozen=True)
class Program:
  """A legacy Estimator program, as the checks run it.

  Attributes:
    model_fn: the legacy `model_fn(features, labels, mode[, params][, config])`.
    input_fn: the training input_fn; also the evaluation and prediction input
      when those are not given (called with mode EVAL / PREDICT when it takes
      `mode`).
    params: the `params` dict given to the Estimator, or None.
    eval_input_fn: input for the eval-metrics check, or None.
    predict_input_fn: input for the predictions check, or None.
    serving_input_receiver_fn: when set, the SavedModel check exports with it.
    names: where each part came from (`pkg.mod:attr`), for the report.
  """
  model_fn: Callable[..., Any]
  input_fn: Callable[..., Any]
  params: Optional[Dict[str, Any]] = None
  eval_input_fn: Optional[Callable[..., Any]] = None
  predict_input_fn: Optional[Callable[..., Any]] = None
  serving_input_receiver_fn: Optional[Callable[..., Any]] = None
  names: Dict[str, str] = dataclasses.field(default_factory=dict)


def tensorflow_with_estimator(real_if_installed: bool = True):
  """Imports TensorFlow with a `tf.estimator`: the real one or ours.

  Args:
    real_if_installed: use tensorflow-estimator when it is installed (TF <=
      2.15); False always installs estimator_compat.
  """
  if real_if_installed:
    try:
      import tensorflow_estimator  # noqa: F401  pylint: disable=unused-import,g-import-not-at-top
      import tensorflow as tf  # pylint: disable=g-import-not-at-top
      if hasattr(tf, "estimator") and hasattr(tf.estimator, "Estimator"):
        return tf
    except ImportError:
      pass
  import estimator_compat  # pylint: disable=g-import-not-at-top
  estimator_compat.install()
  import tensorflow as tf  # pylint: disable=g-import-not-at-top,reimported
  return tf


@contextlib.contextmanager
def _estimator_runs_skipped() -> Iterator[None]:
  """Makes Estimator.train/evaluate/predict/export no-ops while importing."""
  classes = []
  # Only Estimators already imported: importing estimator_compat on TF 2.15
  # would switch tf.keras to tf-keras under the real Estimator.
  for module_name in ("estimator_compat.estimator",
                      "tensorflow_estimator.python.estimator.estimator"):
    module = sys.modules.get(module_name)
    if module is None:
      continue
    for class_name in ("Estimator", "EstimatorV2"):
      cls = getattr(module, class_name, None)
      if cls is not None and cls not in classes:
        classes.append(cls)
  saved = []

  def skipped(name):
    def method(self, *args, **kwargs):
      del args, kwargs
      logging.info("migration: skipped %s.%s() while loading the program.",
                   type(self).__name__, name)
      return self if name == "train" else None
    return method

  for cls in classes:
    for name in _RUN_METHODS:
      if name in cls.__dict__:
        saved.append((cls, name, cls.__dict__[name]))
        setattr(cls, name, skipped(name))
  try:
    yield
  finally:
    for cls, name, method in saved:
      setattr(cls, name, method)


def _import(module_part: str):
  if module_part.endswith(".py") or os.sep in module_part:
    path = os.path.abspath(module_part)
    if not os.path.exists(path):
      raise ValueError(f"Program file {module_part!r} does not exist. Fix: "
                       "give a path to a .py file or a module name "
                       "(pkg.mod).")
    name = "migration_program_" + os.path.splitext(
        os.path.basename(path))[0]
    if name in sys.modules:
      return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with _estimator_runs_skipped():
      spec.loader.exec_module(module)
    return module
  with _estimator_runs_skipped():
    return importlib.import_module(module_part)


def load_attr(reference: str) -> Any:
  """Loads `pkg.mod:attr` or `path/file.py:attr` (Estimator runs skipped).

  Raises:
    ValueError: a malformed reference, or a module without that attribute;
      the message says how to write it.
  """
  tensorflow_with_estimator()
  module_part, sep, attr = reference.rpartition(":")
  if not sep or not module_part or not attr:
    raise ValueError(f"{reference!r} does not name a function. Fix: write "
                     "pkg.module:function or path/to/file.py:function.")
  try:
    module = _import(module_part)
  except ModuleNotFoundError as e:
    raise ValueError(f"Cannot import {module_part!r} ({e}). Fix: run from "
                     "the directory that holds the package or put it on "
                     "PYTHONPATH.") from e
  value = module
  for part in attr.split("."):
    if not hasattr(value, part):
      raise ValueError(f"{module_part} has no {attr!r}. Fix: name one of its "
                       "functions, e.g. "
                       f"{module_part}:{_a_function(module)}.")
    value = getattr(value, part)
  return value


def _a_function(module) -> str:
  for name in ("model_fn", "input_fn", "train_input_fn"):
    if callable(getattr(module, name, None)):
      return name
  return "model_fn"


def from_references(model_fn: str, input_fn: str,
                    params: Optional[str] = None,
                    eval_input_fn: Optional[str] = None,
                    predict_input_fn: Optional[str] = None,
                    serving_input_receiver_fn: Optional[str] = None
                   ) -> Program:
  """A Program from command-line references; params is JSON text."""
  names = {"model_fn": model_fn, "input_fn": input_fn}
  loaded = {"model_fn": load_attr(model_fn), "input_fn": load_attr(input_fn)}
  for key, reference in (("eval_input_fn", eval_input_fn),
                         ("predict_input_fn", predict_input_fn),
                         ("serving_input_receiver_fn",
                          serving_input_receiver_fn)):
    if reference:
      names[key] = reference
      loaded[key] = load_attr(reference)
  for key in ("model_fn", "input_fn"):
    if not callable(loaded[key]):
      raise ValueError(f"--{key}={names[key]} is a "
                       f"{type(loaded[key]).__name__}, not a function. Fix: "
                       f"name the {key} itself.")
  parsed = None
  if params:
    try:
      parsed = json.loads(params)
    except json.JSONDecodeError as e:
      raise ValueError(f"--params is not JSON ({e}). Fix: e.g. "
                       "--params='{\"learning_rate\": 0.01}'.") from e
    if not isinstance(parsed, dict):
      raise ValueError("--params must be a JSON object (a dict), got "
                       f"{params!r}.")
  return Program(params=parsed, names=names, **loaded)
