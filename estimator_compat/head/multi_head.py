"""`tf.estimator.MultiHead`: several named heads trained on one summed loss."""

from typing import Any, Dict, Optional, Sequence

import tensorflow as tf

from estimator_compat import export as export_lib
from estimator_compat import mode_keys
from estimator_compat import spec as spec_lib
from estimator_compat.head import base_head
from estimator_compat.head import keys as keys_lib

ModeKeys = mode_keys.ModeKeys
_K = keys_lib.MetricKeys


def _no_op_train_fn(loss):
  del loss
  return tf.no_op()


def _default_export_output(export_outputs: Dict[str, Any], head_name: str):
  if len(export_outputs) == 1:
    return next(iter(export_outputs.values()))
  if keys_lib.DEFAULT_SERVING_KEY not in export_outputs:
    raise ValueError(
        f"{head_name} did not specify default export_outputs. Given: "
        f"{export_outputs} Suggested fix: Use one of the heads in "
        "tf.estimator, or include key "
        f"{keys_lib.DEFAULT_SERVING_KEY} in export_outputs.")
  return export_outputs[keys_lib.DEFAULT_SERVING_KEY]


class MultiHead(base_head.Head):
  """Head for multi-objective learning over named heads, as TF 2.15's.

  The loss is the (optionally weighted) sum of the heads' losses; metric
  keys are the heads' own (suffixed by their names) plus `loss/<name>`;
  predictions are keyed by `(head name, prediction key)`; the first head
  is served by default. Logits and labels are dicts by head name (logits
  may also be one Tensor, split along its last dimension).

  Args:
    heads: the heads, each with a name.
    head_weights: optional weights of the heads' losses.
  """

  def __init__(self, heads: Sequence[base_head.Head],
               head_weights: Optional[Sequence[float]] = None):
    if not heads:
      raise ValueError(f"Must specify heads. Given: {heads}. Fix: pass a "
                       "list of named heads.")
    if head_weights and len(head_weights) != len(heads):
      raise ValueError(
          "heads and head_weights must have the same size. Given len(heads): "
          f"{len(heads)}. Given len(head_weights): {len(head_weights)}. Fix: "
          "give one weight per head.")
    for head in heads:
      if head.name is None:
        raise ValueError(
            f"All given heads must have name specified. Given: {head}. Fix: "
            "pass name= to each head.")
    self._heads = tuple(heads)
    self._head_weights = tuple(head_weights) if head_weights else ()
    self._logits_dimension = sum(h.logits_dimension for h in self._heads)
    self._loss_keys = tuple(f"{_K.LOSS}/{h.name}" for h in self._heads)

  @property
  def name(self) -> str:
    return "_".join(h.name for h in self._heads)

  @property
  def logits_dimension(self) -> int:
    return self._logits_dimension

  @property
  def loss_reduction(self) -> str:
    reductions = [h.loss_reduction for h in self._heads]
    if len(set(reductions)) > 1:
      raise ValueError(
          "The loss_reduction must be the same for different heads. Given: "
          f"{reductions}. Fix: give every head the same loss_reduction.")
    return reductions[0]

  def _split_logits(self, logits) -> Dict[str, tf.Tensor]:
    with tf.compat.v1.name_scope("split_logits"):
      logits = tf.convert_to_tensor(logits)
      dims = [h.logits_dimension for h in self._heads]
      shape = logits.shape.as_list()
      if shape[-1] is not None and shape[-1] != sum(dims):
        raise ValueError(
            f"Could not split logits of shape {shape!r} among the heads with "
            f"individual logits dimensions: {dims!r}. The last dimension of "
            f"the logits tensor should equal {shape[-1]} but is {sum(dims)}. "
            "Fix: give the logits a last dimension of "
            "multi_head.logits_dimension, or pass a dict by head name.")
      parts = tf.split(logits, dims, axis=-1)
      return {h.name: part for h, part in zip(self._heads, parts)}

  def _check_logits_and_labels(self, logits, labels=None):
    names = [h.name for h in self._heads]
    if isinstance(logits, dict):
      missing = sorted(set(names) - set(logits))
      if missing:
        raise ValueError(
            f"logits has missing values for head(s): {missing}. Fix: key the "
            "logits dict by every head's name.")
      logits_dict = logits
    else:
      logits_dict = self._split_logits(logits)
    if labels is not None:
      if not isinstance(labels, dict):
        raise ValueError(
            f"labels must be a dict. Given: {labels}. Fix: have input_fn "
            "return labels as a dict keyed by head name.")
      missing = sorted(set(names) - set(labels))
      if missing:
        raise ValueError(
            f"labels has missing values for head(s): {missing}. Fix: key the "
            "labels dict by every head's name.")
    return logits_dict

  def loss(self, labels, logits, features=None, mode=None,
           regularization_losses=None):
    """The (weighted) sum of the heads' losses, plus regularization."""
    logits_dict = self._check_logits_and_labels(logits, labels)
    losses = [h.loss(logits=logits_dict[h.name], labels=labels[h.name],
                     features=features, mode=mode) for h in self._heads]
    with tf.compat.v1.name_scope("merge_losses"):
      if self._head_weights:
        losses = [tf.math.multiply(loss, weight)
                  for loss, weight in zip(losses, self._head_weights)]
      return base_head.add_regularization(tf.math.add_n(losses),
                                          regularization_losses)

  def predictions(self, logits, keys=None):
    """The heads' predictions, keyed by (head name, prediction key)."""
    del keys
    logits_dict = self._check_logits_and_labels(logits)
    out = {}
    with tf.compat.v1.name_scope("merge_pred"):
      for head in self._heads:
        for key, value in head.predictions(
            logits=logits_dict[head.name]).items():
          out[(head.name, key)] = value
    return out

  def metrics(self, regularization_losses=None):
    """The `loss/<head name>` means (and the regularization loss)."""
    out = {}
    if regularization_losses is not None:
      out[self._summary_key(_K.LOSS_REGULARIZATION)] = tf.keras.metrics.Mean(
          name=_K.LOSS_REGULARIZATION)
    with tf.compat.v1.name_scope("merge_eval"):
      for key in self._loss_keys:
        out[key] = tf.keras.metrics.Mean(name=key)
    return out

  def update_metrics(self, eval_metrics, features, logits, labels,
                     regularization_losses=None):
    """Updates the losses and adds each head's updated metrics."""
    logits_dict = self._check_logits_and_labels(logits, labels)
    if regularization_losses is not None:
      eval_metrics[self._summary_key(_K.LOSS_REGULARIZATION)].update_state(
          values=tf.math.add_n(regularization_losses))
    for head, loss_key in zip(self._heads, self._loss_keys):
      head_logits, head_labels = logits_dict[head.name], labels[head.name]
      eval_metrics[loss_key].update_state(values=head.loss(
          logits=head_logits, labels=head_labels, features=features))
      eval_metrics.update(head.update_metrics(
          head.metrics(), features, head_logits, head_labels) or {})
    return eval_metrics

  def create_estimator_spec(
      self, features, mode, logits, labels=None, optimizer=None,
      trainable_variables=None, train_op_fn=None, update_ops=None,
      regularization_losses=None) -> spec_lib.EstimatorSpec:
    """The EstimatorSpec of all heads (see `Head.create_estimator_spec`)."""
    with tf.compat.v1.name_scope(self.name, "multi_head"):
      logits_dict = self._check_logits_and_labels(logits, labels)
      specs = [h.create_estimator_spec(
          features=features, mode=mode, logits=logits_dict[h.name],
          labels=labels[h.name] if labels else None,
          train_op_fn=_no_op_train_fn) for h in self._heads]
      predictions = self.predictions(logits)
      if mode == ModeKeys.PREDICT:
        return spec_lib.EstimatorSpec(
            mode=ModeKeys.PREDICT, predictions=predictions,
            export_outputs=self._merged_export_outputs(specs))
      loss = self.loss(labels, logits, features, mode, regularization_losses)
      if mode == ModeKeys.EVAL:
        return spec_lib.EstimatorSpec(
            mode=ModeKeys.EVAL, predictions=predictions, loss=loss,
            eval_metric_ops=self.update_metrics(
                self.metrics(regularization_losses=regularization_losses),
                features, logits, labels,
                regularization_losses=regularization_losses))
      if mode != ModeKeys.TRAIN:
        raise ValueError(f"mode={mode} unrecognized")
      train_op = base_head.train_op_for(
          optimizer=optimizer, trainable_variables=trainable_variables,
          train_op_fn=train_op_fn, update_ops=update_ops, loss=loss,
          loss_reduction=self.loss_reduction)
      base_head.write_loss_summaries(loss, regularization_losses,
                                     lambda key: key)
      eval_metrics = {}
      for spec in specs:
        eval_metrics.update(spec.eval_metric_ops or {})
      return spec_lib.EstimatorSpec(
          mode=ModeKeys.TRAIN, loss=loss, train_op=train_op,
          predictions=predictions, eval_metric_ops=eval_metrics)

  def _merged_export_outputs(self, specs) -> Dict[str, Any]:
    """The first head's default output, every head's outputs by
    `<head name>[/<signature>]`, and one merged `predict` output."""
    outputs = {keys_lib.DEFAULT_SERVING_KEY: _default_export_output(
        specs[0].export_outputs, self._heads[0].name)}
    merged_predict = {}
    for head, spec in zip(self._heads, specs):
      for key, value in spec.export_outputs.items():
        name = (head.name if key == keys_lib.DEFAULT_SERVING_KEY
                else f"{head.name}/{key}")
        outputs[name] = value
        if (key == keys_lib.PREDICT_SERVING_KEY
            and isinstance(value, export_lib.PredictOutput)):
          for output_key, tensor in value.outputs.items():
            merged_predict[f"{head.name}/{output_key}"] = tensor
    outputs[keys_lib.PREDICT_SERVING_KEY] = export_lib.PredictOutput(
        merged_predict)
    return outputs
