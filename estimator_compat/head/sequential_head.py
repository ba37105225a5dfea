"""Heads over sequences: the static head applied to the unpadded steps.

TF 2.15's `head/sequential_head.py` (`SequentialHeadWrapper`), which the
RNN estimators use with `return_sequences=True`: logits, labels and the
named features of shape [batch, time, ...] are flattened to the steps the
sequence mask keeps, then handed to the wrapped head; in PREDICT mode the
mask joins the predictions.
"""

import abc
from collections.abc import Iterable
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import tensorflow as tf

from estimator_compat.head import base_head
from estimator_compat.head import multi_head
from estimator_compat.mode_keys import ModeKeys


class _SequentialHead(base_head.Head):
  """A head whose features hold a [batch, time] sequence mask.

  `input_sequence_mask_key` names that feature.
  """

  @property
  @abc.abstractmethod
  def input_sequence_mask_key(self) -> str:
    """The key of the sequence mask in the features dict."""


class SequentialHeadWrapper(_SequentialHead):
  """Applies a static `Head` to the steps a sequence mask keeps.

  Loss, metrics and the train op are the static head's over the flattened
  unpadded steps; PREDICT mode returns the static head's predictions of
  every step plus the mask under `input_sequence_mask_key`.
  """

  def __init__(self, static_head: base_head.Head,
               sequence_length_mask: str = "sequence_length_mask",
               feature_columns: Union[None, str, Sequence[str]] = None
               ) -> None:
    """Wraps `static_head`.

    Args:
      static_head: the `Head` to apply per step (not a `MultiHead`).
      sequence_length_mask: the features key of the [batch, time] mask.
      feature_columns: feature keys (a string or strings) flattened with the
        mask and given to the static head, typically its weight column.

    Raises:
      TypeError: a mask key or a feature column that is not a string.
      ValueError: `static_head` is a `MultiHead`.
    """
    if not isinstance(sequence_length_mask, str):
      raise TypeError(
          "`sequence_mask` column must be a string. Given type: "
          f"{type(sequence_length_mask)}. Fix: pass the name of the mask "
          "feature.")
    self._sequence_length_mask = sequence_length_mask
    columns = feature_columns or []
    if not isinstance(columns, Iterable):
      raise TypeError(
          "`feature_columns` must be either a string or an iterable of "
          f"strings got {type(columns)} instead. Fix: pass feature names.")
    self._feature_columns = [columns] if isinstance(columns, str) else list(
        columns)
    for column in self._feature_columns:
      if not isinstance(column, str):
        raise TypeError(
            f"Column must a string. Given type: {type(column)}. Fix: pass "
            "feature names, not feature columns.")
    if isinstance(static_head, multi_head.MultiHead):
      raise ValueError(
          "`MultiHead` is not supported with `SequentialHeadWrapper`. Fix: "
          "wrap each single head on its own.")
    self._static_head = static_head

  @property
  def input_sequence_mask_key(self) -> str:
    return self._sequence_length_mask

  @property
  def static_head(self) -> base_head.Head:
    return self._static_head

  @property
  def logits_dimension(self) -> int:
    return self._static_head.logits_dimension

  @property
  def loss_reduction(self) -> str:
    return self._static_head.loss_reduction

  @property
  def name(self) -> Optional[str]:
    if self._static_head.name:
      return f"{self._static_head.name}_sequential"
    return None

  def _flatten(self, labels, logits, features
               ) -> Tuple[tf.Tensor, tf.Tensor, Dict[str, tf.Tensor]]:
    """Labels, logits and the named features over the unpadded steps.

    Raises:
      ValueError: the mask is missing or not of rank 2, a named feature is
        missing, or a tensor has rank below 2.
    """
    key = self.input_sequence_mask_key
    if key not in features:
      raise ValueError(
          f"The provided sequence_length_mask key `{key}` should be included "
          "in the features dictionary, but was not found. Found keys: "
          f"{list(features.keys())}. Fix: add the [batch, time] mask to the "
          "features under that key.")
    mask = features[key]
    if mask.get_shape().ndims != 2:
      raise ValueError(
          "Mask is expected to have two dimensions, got "
          f"{mask.get_shape().ndims} instead. Fix: pass a [batch, time] mask.")
    with tf.compat.v1.name_scope("flatten"):
      steps = tf.math.reduce_sum(tf.cast(mask, tf.int32))
      flat_logits = flatten_steps(logits, mask, steps)
      flat_labels = flatten_steps(labels, mask, steps)
      flat_features = {}
      for column in self._feature_columns:
        if column not in features:
          raise ValueError(
              f"`{column}` column expected in features dictionary. Fix: the "
              "input_fn must provide it.")
        flat_features[column] = flatten_steps(features[column], mask, steps)
      return flat_labels, flat_logits, flat_features

  def loss(self, logits, labels, features=None, mode=None,  # type: ignore[override]  # TF 2.15's argument order.
           regularization_losses=None):
    flat_labels, flat_logits, flat_features = self._flatten(
        labels, logits, features)
    return self._static_head.loss(
        logits=flat_logits, labels=flat_labels, features=flat_features,
        mode=mode, regularization_losses=regularization_losses)

  def predictions(self, logits, keys=None):
    return self._static_head.predictions(logits, keys=keys)

  def metrics(self, regularization_losses=None):
    return self._static_head.metrics(regularization_losses)

  def update_metrics(self, eval_metrics, features, logits, labels,
                     regularization_losses=None):
    flat_labels, flat_logits, flat_features = self._flatten(
        labels, logits, features)
    return self._static_head.update_metrics(
        eval_metrics=eval_metrics, features=flat_features, logits=flat_logits,
        labels=flat_labels, regularization_losses=regularization_losses)

  def create_estimator_spec(self, features, mode, logits, labels=None,
                            optimizer=None, trainable_variables=None,
                            train_op_fn=None, update_ops=None,
                            regularization_losses=None):
    """The static head's spec over the unpadded steps.

    PREDICT mode is not flattened: the predictions of every step, plus the
    sequence mask under `input_sequence_mask_key`.
    """
    if mode == ModeKeys.PREDICT:
      spec = self._static_head.create_estimator_spec(
          features=features, mode=mode, logits=logits)
      predictions = dict(spec.predictions)
      predictions[self.input_sequence_mask_key] = features[
          self.input_sequence_mask_key]
      return spec._replace(predictions=predictions)
    flat_labels, flat_logits, flat_features = self._flatten(
        labels, logits, features)
    return self._static_head.create_estimator_spec(
        features=flat_features, mode=mode, logits=flat_logits,
        trainable_variables=trainable_variables, labels=flat_labels,
        optimizer=optimizer, train_op_fn=train_op_fn,
        regularization_losses=regularization_losses, update_ops=update_ops)


def flatten_steps(tensor: Any, mask: tf.Tensor,
                  steps: tf.Tensor) -> tf.Tensor:
  """[batch, time, D...] to [steps, D...] (a rank-2 input gets D=1).

  A dense tensor keeps the steps `mask` keeps; a SparseTensor its values in
  row-major order. The result's length is checked against `steps`.

  Raises:
    ValueError: rank below 2, not a Tensor or SparseTensor, or (eagerly) a
      length other than `steps`.
  """
  shape = tensor.get_shape()
  if shape.ndims < 2:
    raise ValueError(
        "Input tensor expected to have at least 2 dimensions, got "
        f"{shape.ndims} instead. Fix: sequence tensors are [batch, time, ...].")
  if isinstance(tensor, tf.sparse.SparseTensor):
    flat = tf.sparse.reorder(tensor).values
    if shape.ndims > 2:
      flat = tf.reshape(tensor.values, tf.concat([[-1], shape[2:]], axis=0))
  elif isinstance(tensor, tf.Tensor):
    flat = tf.boolean_mask(tensor, mask)
  else:
    raise ValueError(
        "`tensor` expected to be a `Tensor` or  `SparseTensor` got "
        f"`{tensor}` instead. Fix: pass a Tensor or SparseTensor.")
  if shape.ndims == 2:
    flat = tf.expand_dims(flat, -1)
    expected = tf.concat([[steps], [1]], axis=0)
  else:
    expected = tf.concat([[steps], shape[2:]], axis=0)
  message = "Tensor shape is incompatible with provided mask."
  if tf.executing_eagerly():
    if tuple(flat.shape) != tuple(expected.numpy()):
      raise ValueError(message)
    return flat
  check = tf.compat.v1.debugging.assert_equal(
      tf.compat.v1.shape(flat), expected, message=message)
  with tf.control_dependencies([check]):
    return tf.identity(flat)
