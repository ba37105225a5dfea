"""train / evaluate / predict on the function engine (one call of a mode)."""

from typing import (Any, Callable, Dict, Iterator, List, Optional, Sequence,
                    Tuple)

import tensorflow as tf

from estimator_compat.checkpoints import checkpoint_reading
from estimator_compat.distribute import strategies
from estimator_compat.front import loss_summary
from estimator_compat.front import tf_logging as logging
from estimator_compat.engines import graph as graph_engine
from estimator_compat.engines.controller import BatchOptions
from estimator_compat.engines.controller import EvaluationController
from estimator_compat.engines.controller import PredictionController
from estimator_compat.engines.controller import TrainingController
from estimator_compat.engines.controller import TrainOptions
from estimator_compat.engines.hook_cadence import HookCadence
from estimator_compat.engines.function import ps_training
from estimator_compat.engines.function import scaffold_fields
from estimator_compat.engines.function import tf1_code
from estimator_compat.engines.function import variable_saver
from estimator_compat.engines.function.batch_runner import TracedBatches
from estimator_compat.engines.function.fetch_keys import (
    FetchKey, FetchKind)
from estimator_compat.engines.function.input_pipeline import (
    make_input, model_input)
from estimator_compat.engines.function.session import (
    EagerSession, HookRunner, global_step_read_name, to_numpy)
from estimator_compat.engines.function.sync_runner import SyncHooks
from estimator_compat.engines.function.sync_runner import SyncRunner
from estimator_compat.engines.function.traced_model import TracedModel
from estimator_compat.front.eval_progress import EvalProgress
from estimator_compat.hooks import (LoggingTensorHook, NanTensorHook,
                                    StepCounterHook, StopAtStepHook,
                                    SummarySaverHook)
from estimator_compat.mode_keys import ModeKeys
from estimator_compat.front.model_fn_call import ModelSetup


class HookedBuild:
  """A TracedModel build_fn that also makes the call's HookRunner.

  `build(spec)` returns (fetches, hooks); the hooks' begin() runs inside the
  trace, where the tensors they look up or create belong, and `runner` then
  holds them; `spec` is the EstimatorSpec the trace built.
  """

  def __init__(self, build: Callable[[Any], Tuple[Dict[str, Any],
                                                  List[Any]]]):
    self._build = build
    self.runner: Optional[HookRunner] = None
    self.spec: Any = None

  def __call__(self, spec: Any) -> Dict[str, Any]:
    self.spec = spec
    fetches, hooks = self._build(spec)
    self.runner = HookRunner(hooks)
    self.runner.begin()
    return fetches


def _session(model: TracedModel) -> EagerSession:
  return EagerSession(model.graph, model.fetcher.run)


def _batch_options(model: TracedModel, hooks: HookRunner,
                   steps: Optional[int], steps_per_loop: Optional[int]
                  ) -> Tuple[HookCadence, BatchOptions]:
  """The hooks' cadences and how evaluation/prediction batches may run."""
  cadence = HookCadence(hooks.hooks, None, hooks.session)
  return cadence, BatchOptions(
      automatic=steps_per_loop is None and cadence.counts_iterations_only,
      steps=steps, input_batches=model.input_batches)


def train(*, setup: ModelSetup, input_fn, hooks: Sequence[Any],
          steps: Optional[int], max_steps: Optional[int],
          saving_listeners: Sequence[Any]) -> Optional[float]:
  """Trains until steps/max_steps or the end of input; returns last loss."""
  config = setup.config
  strategy = strategies.for_training(config, setup.choices.strategy)
  if strategies.is_parameter_server(strategy):
    return ps_training.train(setup=setup, input_fn=input_fn, hooks=hooks,
                             steps=steps, max_steps=max_steps,
                             saving_listeners=saving_listeners,
                             strategy=strategy)
  dataset, parts = make_input(setup, input_fn, ModeKeys.TRAIN, strategy)
  def build(spec):
    scaffold_fields.check(spec.scaffold, "train")
    # The summary hooks share one cached writer per directory; made here,
    # in a graph of its own, it does not try to serialize the traced graph's
    # eager-variable collections into the events file (graph.pbtxt has it),
    # and it is made only once the call is sure to run on this engine.
    if config.is_chief:
      with tf.Graph().as_default():
        tf.compat.v1.summary.FileWriterCache.get(setup.model_dir)
    loss_summary.add_loss_summary(spec.loss)
    merged = scaffold_fields.summary_op(spec.scaffold)
    graph = tf.compat.v1.get_default_graph()
    read = graph.get_tensor_by_name(global_step_read_name(graph))
    # The Estimator's order: MonitoredTrainingSession's summary hooks, the
    # user's hooks, then NanTensorHook (the user's see a step it stops on).
    own = []
    if config.is_chief and config.log_step_count_steps:
      own.append(StepCounterHook(every_n_steps=config.log_step_count_steps,
                                 output_dir=setup.model_dir))
    if config.is_chief and config.save_summary_steps and merged is not None:
      own.append(SummarySaverHook(save_steps=config.save_summary_steps,
                                  output_dir=setup.model_dir,
                                  summary_op=merged))
    all_hooks = own + list(hooks)
    if steps is not None or max_steps is not None:
      all_hooks.append(StopAtStepHook(num_steps=steps, last_step=max_steps))
    all_hooks.append(NanTensorHook(spec.loss))
    if config.log_step_count_steps:  # None turns loss logging off.
      all_hooks.append(LoggingTensorHook(
          {"loss": spec.loss, "step": read},
          every_n_iter=config.log_step_count_steps))
    all_hooks += list(spec.training_hooks)
    if config.is_chief:
      all_hooks = list(spec.training_chief_hooks) + all_hooks
    return {"__train_op__": spec.train_op}, all_hooks

  hooked = HookedBuild(build)
  model = TracedModel(setup, ModeKeys.TRAIN, dataset, hooked, strategy,
                      parts=parts)
  try:
    return _train_traced(setup, model, hooked.runner, strategy, steps,
                         max_steps, saving_listeners)
  finally:
    model.release()


def _train_traced(setup: ModelSetup, model: TracedModel,
                  hook_runner: HookRunner, strategy: Any,
                  steps: Optional[int], max_steps: Optional[int],
                  saving_listeners: Sequence[Any]) -> Optional[float]:
  """train()'s restore, session hooks and steps on the traced model."""
  config = setup.config
  variables = model.capture.saveable_by_name()
  global_step = variables["global_step"]
  variable_saver.check_saveable_across_workers(variables)
  variable_saver.restore_or_warm_start(
      setup, variables, checkpoint_reading.latest_checkpoint(setup.model_dir))
  model.initialize_tables()
  writer = variable_saver.CheckpointWriter(
      setup, variables, global_step, model.graph, saving_listeners)
  with tf1_code.hook_session_errors():
    hook_runner.after_create_session(_session(model))
  cadence = None
  if config.steps_per_loop is None and not strategies.is_multi_worker(
      strategy):
    # Workers would plan different calls (only the chief has some hooks).
    cadence = HookCadence(hook_runner.hooks, model.spec.loss,
                          hook_runner.session)
  return TrainingController(
      runner=SyncRunner(model, hook_runner.variables, global_step),
      hooks=SyncHooks(hook_runner, model.graph), checkpoints=writer,
      global_step=global_step,
      options=TrainOptions(steps=steps, max_steps=max_steps,
                           steps_per_loop=config.steps_per_loop),
      cadence=cadence).run()




def evaluate(*, setup: ModelSetup, input_fn, hooks: Sequence[Any],
             steps: Optional[int],
             checkpoint_path: Optional[str]) -> Dict[str, Any]:
  """Evaluates a checkpoint; returns metrics, `loss` and `global_step`."""
  strategy = strategies.for_evaluation(setup.config, setup.choices.strategy)
  dataset, parts = make_input(setup, input_fn, ModeKeys.EVAL, strategy)
  def build(spec):
    scaffold_fields.check(spec.scaffold, "evaluate")
    return {}, list(hooks) + list(spec.evaluation_hooks)

  hooked = HookedBuild(build)
  model = TracedModel(setup, ModeKeys.EVAL, dataset, hooked, strategy,
                      metrics_fn=graph_engine.metric_ops, parts=parts)
  try:
    return _evaluate_traced(setup, model, hooked.runner, steps,
                            checkpoint_path)
  finally:
    model.release()


def _evaluate_traced(setup: ModelSetup, model: TracedModel,
                     runner: HookRunner, steps: Optional[int],
                     checkpoint_path: Optional[str]) -> Dict[str, Any]:
  """evaluate()'s restore, session hooks and steps on the traced model."""
  variables = model.capture.saveable_by_name()
  if not checkpoint_path:
    logging.info("Could not find trained model in model_dir: %s, running "
                 "initialization to evaluate.", setup.model_dir)
  progress = EvalProgress(steps)
  progress.start()  # Before the restore, as the Estimator logged them.
  variable_saver.restore_or_warm_start(setup, variables, checkpoint_path)
  model.initialize_tables()
  with tf1_code.hook_session_errors():
    runner.after_create_session(_session(model))
  cadence, options = _batch_options(model, runner, steps,
                                    setup.config.steps_per_loop)
  EvaluationController(runner=TracedBatches(model, runner), cadence=cadence,
                       options=options, batch_done=progress.step_done).run()
  final = model.run_without_input(model.metric_values)
  runner.end()
  progress.finish()
  results = {key: tf.nest.map_structure(to_numpy, value)
             for key, value in final.items()}
  results["global_step"] = variables["global_step"].numpy()
  return results


def predict(*, setup: ModelSetup, input_fn, hooks: Sequence[Any],
            predict_keys: Optional[Sequence[str]],
            checkpoint_path: Optional[str],
            yield_single_examples: bool) -> Iterator[Any]:
  """Yields predictions of a checkpoint, per example or per batch."""
  dataset, parts = model_input(setup, input_fn, ModeKeys.PREDICT)
  def build(spec):
    scaffold_fields.check(spec.scaffold, "predict")
    predictions = graph_engine._select_predictions(spec, predict_keys)  # pylint: disable=protected-access
    all_hooks = list(hooks) + list(spec.prediction_hooks)
    if isinstance(predictions, dict):
      # Fetched by position: MultiHead's keys are (head, key) tuples.
      return ({FetchKey(FetchKind.PREDICTION, str(i)): v
               for i, v in enumerate(predictions.values())}, all_hooks)
    return {"prediction": predictions}, all_hooks

  # A (features, labels) element keeps its labels: the traced model drops
  # them in PREDICT mode (model_fn gets labels=None), and the steps, pruned
  # to the predictions, never read them. (A map dropping them cost a
  # function trace per predict() call.)
  hooked = HookedBuild(build)
  model = TracedModel(setup, ModeKeys.PREDICT, dataset, hooked, parts=parts)
  try:
    yield from _predict_traced(setup, model, hooked, predict_keys,
                               checkpoint_path, yield_single_examples)
  finally:
    model.release()


def _predict_traced(setup: ModelSetup, model: TracedModel,
                    hooked: HookedBuild,
                    predict_keys: Optional[Sequence[str]],
                    checkpoint_path: Optional[str],
                    yield_single_examples: bool) -> Iterator[Any]:
  """predict()'s restore, session hooks and steps on the traced model."""
  variables = model.capture.saveable_by_name()
  variable_saver.restore_or_warm_start(setup, variables, checkpoint_path)
  model.initialize_tables()
  runner = hooked.runner
  with tf1_code.hook_session_errors():
    runner.after_create_session(_session(model))
  cadence, options = _batch_options(model, runner, None,
                                    setup.config.steps_per_loop)
  controller = PredictionController(runner=TracedBatches(model, runner),
                                    cadence=cadence, options=options)
  for values in controller.batches():
    if "prediction" in values:
      batch = values["prediction"]
    else:
      keys = list(graph_engine._select_predictions(hooked.spec, predict_keys))  # pylint: disable=protected-access
      by_fetch = {FetchKey(FetchKind.PREDICTION, str(i)): key
                  for i, key in enumerate(keys)}
      batch = {by_fetch[k]: v for k, v in values.items() if k in by_fetch}
    if yield_single_examples:
      yield from graph_engine._single_examples(batch)  # pylint: disable=protected-access
    else:
      yield batch
  runner.end()
