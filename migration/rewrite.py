"""The TF2 new side of a migration check: a rewrite of the legacy program.

  rewrite = migration.Rewrite(build=make_keras_model,
                              predictions_fn=to_legacy_predictions)
  migration.compare(model_fn, input_fn, new=rewrite, old=GOLDEN_DIR)

`build()` returns either a compiled tf-keras Model, or a train_step
(`train_step(features, labels) -> loss`; the variables are those `build`
created, the optimizer the one tf-keras optimizer it closes over), or a dict with `train_step` and
optionally `loss` (`loss(features, labels) -> (loss, predictions)`, in
training mode, for the forward and gradients checks), `predict`
(`predict(features) -> predictions`), `evaluate` (`evaluate(batches) ->
{metric: value}`), `optimizer` (a tf-keras optimizer, whose state maps to
the legacy slots) and `variables` (default: every variable `build` created).
A compiled Model gives all of these itself. The rewrite's variables are
paired with the legacy names by migration.variable_map (automatically, or by
`variable_map`).
"""

import contextlib
import dataclasses
import inspect
from typing import Any, Callable, Dict, Iterator, List, Optional

import numpy as np
import tensorflow as tf


@dataclasses.dataclass
class Rewrite:
  """A TF2 rewrite of the legacy program (see the module docstring).

  Attributes:
    build: makes the model (called once per check, after seeding).
    input_fn: `input_fn(mode) -> tf.data.Dataset` of (features, labels)
      batches; None: the legacy input_fn through
      estimator_compat.adapters.input_fn_to_dataset_fn.
    variable_map: legacy variable name -> the rewrite's variable name, for
      variables automatic pairing cannot place.
    predictions_fn: the Model's outputs -> the legacy model_fn's
      predictions (e.g. logits -> {"classes": ..., "probabilities": ...}).
    serving_fn: `serving_fn(model) -> tf.function` with an input signature,
      exported as serving_default for the saved_model check.
  """
  build: Callable[[], Any]
  input_fn: Optional[Callable[[str], tf.data.Dataset]] = None
  variable_map: Optional[Dict[str, str]] = None
  predictions_fn: Optional[Callable[[Any], Any]] = None
  serving_fn: Optional[Callable[[Any], Any]] = None


def as_rewrite(new: Any) -> Optional[Rewrite]:
  """`new` as a Rewrite: a Rewrite, a compiled Model or a factory; None for
  an engine name."""
  if new is None or isinstance(new, str):
    return None
  if isinstance(new, Rewrite):
    return new
  if isinstance(new, tf.keras.Model):
    if getattr(new, "optimizer", None) is None:
      raise ValueError("The Keras rewrite is not compiled. Fix: "
                       "model.compile(optimizer=..., loss=..., metrics=...) "
                       "before the check.")
    return Rewrite(build=lambda: new)
  if callable(new):
    return Rewrite(build=new)
  raise TypeError(f"new={new!r} is neither an engine name, a compiled "
                  "tf-keras Model, a factory nor a migration.Rewrite.")


@contextlib.contextmanager
def _collecting(created: List[tf.Variable]) -> Iterator[None]:
  def creator(next_creator, **kwargs):
    variable = next_creator(**kwargs)
    created.append(variable)
    return variable
  with tf.variable_creator_scope(creator):
    yield


def _stack(batches: List[Any]) -> Dict[str, np.ndarray]:
  """Per-batch predictions (dict or array) concatenated by key."""
  if isinstance(batches[0], dict):
    return {k: np.concatenate([np.asarray(b[k]) for b in batches])
            for k in batches[0]}
  return {"predictions": np.concatenate([np.asarray(b) for b in batches])}


def _closure_optimizer(train_step: Callable[..., Any]) -> Any:
  """The one tf-keras optimizer a train_step closes over, or None."""
  function = getattr(train_step, "python_function", train_step)
  try:
    names = inspect.getclosurevars(function)
  except TypeError:
    return None
  found = [v for v in list(names.nonlocals.values()) +
           list(names.globals.values())
           if isinstance(v, tf.keras.optimizers.Optimizer) or isinstance(
               v, tf.keras.optimizers.legacy.Optimizer)]
  return found[0] if len(found) == 1 else None


def _model_variables(created: List[tf.Variable], optimizer: Any
                    ) -> List[tf.Variable]:
  """What a factory created, less its optimizer's own variables."""
  if optimizer is None:
    return created
  owned = {id(v) for v in optimizer.variables}
  for name in ("iterations", "learning_rate", "_learning_rate"):
    value = getattr(optimizer, name, None)
    if isinstance(value, tf.Variable):
      owned.add(id(value))
  return [v for v in created if id(v) not in owned]


class Side:
  """What the recorder runs of a rewrite, whatever form it came in."""

  def __init__(self, rewrite: Rewrite, first_features: Any):
    self.rewrite = rewrite
    created: List[tf.Variable] = []
    with _collecting(created):
      built = rewrite.build()
    self.model = built if isinstance(built, tf.keras.Model) else None
    if self.model is not None:
      self.model(first_features)  # Builds a model built lazily.
      self.optimizer = self.model.optimizer
      self.variables = list(self.model.variables)
      self.parts: Dict[str, Any] = {}
    else:
      parts = built if isinstance(built, dict) else {"train_step": built}
      if not callable(parts.get("train_step")):
        raise TypeError("The rewrite's factory must return a compiled Keras "
                        "Model, a train_step function, or a dict with "
                        "'train_step'.")
      self.parts = parts
      self.optimizer = parts.get("optimizer") or _closure_optimizer(
          parts["train_step"])
      self.variables = list(parts.get("variables") or _model_variables(
          created, self.optimizer))
    if self.optimizer is not None:
      self.optimizer.build([v for v in self.variables if v.trainable])

  def _predictions(self, outputs: Any) -> Any:
    fn = self.rewrite.predictions_fn
    return fn(outputs) if fn is not None else outputs

  def forward(self, features, labels):
    """(loss, predictions, gradients, trainable variables) at a batch."""
    trainable = [v for v in self.variables if v.trainable]
    features, labels = tf.nest.map_structure(tf.convert_to_tensor,
                                             (features, labels))
    with tf.GradientTape() as tape:
      if self.model is not None:
        outputs = self.model(features, training=True)
        loss = self.model.compute_loss(features, labels, outputs)
        predictions = self._predictions(outputs)
      elif "loss" in self.parts:
        loss, predictions = self.parts["loss"](features, labels)
      else:
        raise ValueError("The rewrite gives no loss function, so its forward "
                         "pass and gradients cannot be read. Fix: return "
                         "{'train_step': ..., 'loss': fn(features, labels) "
                         "-> (loss, predictions)} from the factory.")
    return loss, predictions, tape.gradient(loss, trainable), trainable

  def train_step(self, features, labels) -> float:
    if self.model is not None:
      return float(self.model.train_on_batch(features, labels,
                                              return_dict=True)["loss"])
    return float(self.parts["train_step"](features, labels))

  def evaluate(self, batches: List[Any]) -> Dict[str, float]:
    if self.model is not None:
      features = [f for f, _ in batches]
      labels = [l for _, l in batches]
      dataset = tf.data.Dataset.from_generator(
          lambda: zip(features, labels),
          output_signature=tf.nest.map_structure(
              lambda a: tf.TensorSpec([None] + list(np.shape(a)[1:]),
                                      tf.as_dtype(np.asarray(a).dtype)),
              (features[0], labels[0])))
      results = self.model.evaluate(dataset, verbose=0, return_dict=True)
    elif "evaluate" in self.parts:
      results = self.parts["evaluate"](batches)
    else:
      raise ValueError("The rewrite gives no evaluate function. Fix: return "
                       "{'train_step': ..., 'evaluate': fn(batches) -> "
                       "{metric: value}} from the factory.")
    return {k: float(v) for k, v in results.items()}

  def predict(self, batches: List[Any]) -> Dict[str, np.ndarray]:
    outputs = []
    for features in batches:
      if self.model is not None:
        outputs.append(self._predictions(self.model(features,
                                                    training=False)))
      elif "predict" in self.parts:
        outputs.append(self.parts["predict"](features))
      else:
        raise ValueError("The rewrite gives no predict function. Fix: return "
                         "{'train_step': ..., 'predict': fn(features)} from "
                         "the factory.")
    return _stack(tf.nest.map_structure(np.asarray, outputs))

  def serving_function(self):
    if self.rewrite.serving_fn is None:
      raise ValueError("The old side exported a SavedModel, the rewrite has "
                       "no serving function. Fix: Rewrite(serving_fn=fn), fn("
                       "model) returning a tf.function with an input "
                       "signature.")
    return self.rewrite.serving_fn(self.model if self.model is not None
                                   else self.parts)
