"""Records what a side's engine feeds the model_fn, step by step.

The `inputs` phase runs the program's own input_fns through the side's
Estimator (the real one, or an engine here) with a stand-in model_fn whose
hook fetches, at every step, the features and labels that model_fn was
given. So the `inputs` check compares what each runtime really feeds a
model_fn: how many steps an input gives before it ends, and which rows each
step gets. (Reading an input_fn in a TF1 graph of our own instead would
check the input_fn, not the engine: a runtime that repeated an iterator's
first batch forever would pass.)

Runs on TF 2.15 + tensorflow-estimator as well as on estimator_compat.
"""

from typing import Any, Callable, Dict, List

from migration.batches import Batch


def _recorder_hook(tf, fetches: Dict[str, Any], sink: List[Batch]):
  """A SessionRunHook appending each step's (features, labels) to sink."""

  class _RecordFed(tf.compat.v1.train.SessionRunHook):

    def before_run(self, run_context):
      del run_context
      return tf.compat.v1.train.SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
      del run_context
      values = run_values.results
      sink.append((values["features"], values.get("labels")))

  return _RecordFed()


def _recording_model_fn(tf, sinks: Dict[str, List[Batch]]):
  """A model_fn that only records its inputs; its train_op counts steps."""
  modes = tf.estimator.ModeKeys

  def model_fn(features, labels, mode, params):
    del params
    fetches = {"features": features}
    if labels is not None and mode != modes.PREDICT:
      fetches["labels"] = labels
    hooks = [_recorder_hook(tf, fetches, sinks[mode])]
    global_step = tf.compat.v1.train.get_or_create_global_step()
    if mode == modes.PREDICT:
      return tf.estimator.EstimatorSpec(
          mode, predictions=tf.identity(global_step), prediction_hooks=hooks)
    # The step reads its input before it counts (no race with the end of
    # the input in a TF1 session).
    with tf.control_dependencies(tf.nest.flatten(fetches,
                                                 expand_composites=True)):
      train_op = tf.group(tf.compat.v1.assign_add(global_step, 1))
    return tf.estimator.EstimatorSpec(
        mode, loss=tf.constant(0.0), train_op=train_op,
        training_hooks=hooks, evaluation_hooks=hooks)

  return model_fn


def _check_some(batches: List[Batch], mode: str) -> List[Batch]:
  if not batches:
    raise ValueError(f"input_fn yielded no batch for mode {mode}. Fix: give "
                     "an input_fn with data for this mode.")
  return batches


def record(tf, make_estimator: Callable[..., Any],
           input_fns: Dict[str, Callable[..., Any]],
           limits: Dict[str, int]) -> Dict[str, List[Batch]]:
  """The batches the engine fed a model_fn, per mode, as numpy.

  Args:
    tf: TensorFlow with the side's `tf.estimator`.
    make_estimator: `make_estimator(model_dir_name, model_fn)` -> the side's
      Estimator (seed, params, engine).
    input_fns: the 'train', 'eval' and 'predict' input_fns.
    limits: the most batches to record per mode: training runs that many
      steps (fewer if its input ends), evaluation too, prediction stops
      after that many batches.

  Returns:
    {'train': [...], 'eval': [...], 'predict': [...]} of (features, labels);
    prediction batches have labels None (the Estimator drops them).

  Raises:
    ValueError: an input gave no batch at all.
  """
  modes = tf.estimator.ModeKeys
  sinks: Dict[str, List[Batch]] = {modes.TRAIN: [], modes.EVAL: [],
                                   modes.PREDICT: []}
  estimator = make_estimator("fed_inputs", _recording_model_fn(tf, sinks))
  estimator.train(input_fns["train"], steps=limits["train"])
  _check_some(sinks[modes.TRAIN], modes.TRAIN)
  estimator.evaluate(input_fns["eval"], steps=limits["eval"])
  predictions = estimator.predict(input_fns["predict"],
                                  yield_single_examples=False)
  for _ in predictions:
    if len(sinks[modes.PREDICT]) >= limits["predict"]:
      break
  predictions.close()
  return {"train": sinks[modes.TRAIN],
          "eval": _check_some(sinks[modes.EVAL], modes.EVAL),
          "predict": [(f, None) for f, _ in _check_some(
              sinks[modes.PREDICT], modes.PREDICT)]}

