"""input_fn_to_dataset_fn: a legacy input_fn as a TF2 `dataset_fn`.

The input_fn is called the way the function engine calls it
(`input_pipeline.make_dataset`): eagerly, with tf_random_seed as the global
seed, its params/config/mode/input_context as declared. A Dataset is used as
it is; constant tensors repeat; a one-shot iterator (or other tensors a
Session can evaluate alone) streams batch by batch from a private Session,
as the Estimator's Session evaluated them. An initializable iterator is
initialized first, as the hook or scaffold that came with it did. Batch
sizes are what input_fn batches: per replica, as under the Estimator.
"""

import dataclasses
from typing import Any, Callable, Dict, Optional

import tensorflow as tf

from estimator_compat.engines.function import graph_input
from estimator_compat.engines.function import input_pipeline
from estimator_compat.errors import NeedsGraphEngine
from estimator_compat.front import configuration
from estimator_compat.front.input_adapter import python_values_as_tensors
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import ModelSetup, invoke_input_fn
from estimator_compat.adapters.local_config import default_config
from estimator_compat.run_config import RunConfig

_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
_ALLOWED = "a tf.data.Dataset, (features, labels), or features"


def _with_iterator_initializers(built: graph_input.InputGraph
                                ) -> graph_input.InputGraph:
  """The input graph, its iterators' MakeIterator ops run at the start."""
  make_iterators = [op for op in built.graph.get_operations()
                    if op.type == "MakeIterator"]
  return dataclasses.replace(
      built, init_ops=list(built.init_ops) + make_iterators)


def _streamed_with_initializers(setup: ModelSetup, input_fn, mode: str,
                                input_context, error: NeedsGraphEngine
                                ) -> tf.data.Dataset:
  """Tensors of an initializable iterator, initialized then streamed.

  Raises:
    ValueError: they need more than iterator initializers (a placeholder's
      feed, queue runners, a variable restored from a checkpoint).
  """
  where = getattr(input_fn, "__name__", "input_fn")

  def call():
    return python_values_as_tensors(
        invoke_input_fn(setup, input_fn, mode, input_context))

  built = _with_iterator_initializers(graph_input.build(
      setup.config.tf_random_seed, mode, call, where, _ALLOWED))
  # With the initializers counted as run, nothing else may need a Session.
  table_init = built.graph.get_collection_ref(
      tf.compat.v1.GraphKeys.TABLE_INITIALIZERS)
  table_init.extend(op for op in built.init_ops if op.type == "MakeIterator")
  try:
    graph_input.classify(built, where)
  except NeedsGraphEngine as still:
    raise ValueError(
        f"{still} input_fn_to_dataset_fn cannot feed it either (there is no "
        "TF1 Session in a TF2 loop). Fix: return a tf.data.Dataset from "
        "input_fn.") from error
  return graph_input.stream(built)


def input_fn_to_dataset_fn(input_fn: Callable[..., Any], mode: str,
                           params: Optional[Dict[str, Any]] = None,
                           config: Optional[RunConfig] = None
                          ) -> Callable[..., tf.data.Dataset]:
  """A `dataset_fn(input_context=None)` giving what input_fn fed model_fn.

  For `strategy.distribute_datasets_from_function(dataset_fn)`,
  `coordinator.create_per_worker_dataset(dataset_fn)`,
  `tf.keras.utils.experimental.DatasetCreator(dataset_fn)` or
  `model.fit(dataset_fn())`. Elements are `(features, labels)` or features
  alone, as input_fn returned them; batches are per replica.

  Args:
    input_fn: a legacy input_fn (returning a Dataset, (features, labels),
      features, iterator tensors; numpy_input_fn, pandas_input_fn).
    mode: a ModeKeys value, passed to input_fn if it declares `mode`.
    params: passed to input_fn if it declares `params`.
    config: a RunConfig (its tf_random_seed seeds input_fn's random ops, as
      the Estimator's graph seed did), passed if input_fn declares `config`.

  Raises:
    TypeError: input_fn is not callable.
    ValueError: mode is not a ModeKeys value.
  """
  if not callable(input_fn):
    raise TypeError(
        f"input_fn must be a callable that returns the input, got "
        f"{type(input_fn).__name__}. Fix: pass the function itself, not its "
        "result.")
  if mode not in _MODES:
    raise ValueError(f"mode={mode!r} is not one of {_MODES}. Fix: pass "
                     "ModeKeys.TRAIN, EVAL or PREDICT.")
  config = config if config is not None else default_config()
  setup = ModelSetup(model_fn=None, model_dir=config.model_dir or "",
                     config=config, params=dict(params or {}),
                     choices=configuration.resolve(config))

  def dataset_fn(input_context: Optional[tf.distribute.InputContext] = None
                ) -> tf.data.Dataset:
    # Tensors streamed from a private Session cannot be split between input
    # pipelines (the Estimator refused them under a strategy, too).
    split = input_context is not None and (
        input_context.num_input_pipelines > 1)
    try:
      return input_pipeline.make_dataset(setup, input_fn, mode, input_context,
                                         distributed=split)
    except NeedsGraphEngine as error:
      if split:
        raise
      return _streamed_with_initializers(setup, input_fn, mode,
                                         input_context, error)

  # Legacy input_fns are graph code: AutoGraph (which create_per_worker_dataset
  # applies) must leave them as they are.
  return tf.autograph.experimental.do_not_convert(dataset_fn)
