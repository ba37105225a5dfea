"""`tf.estimator.experimental.RNNClassifier` and `RNNEstimator`.

TF 2.15 offered them under `tf.estimator.experimental` only (not the TF1
namespace). The model is `rnn_model.RNNModel` (Keras layers); a named
optimizer gets learning rate 0.05 and gradient clip norm 5.0, as there.
"""

from typing import Any, Callable, Optional, Sequence

import tensorflow as tf
from tensorflow.python.platform import tf_logging as logging

from estimator_compat.canned import dnn_heads
from estimator_compat.canned import optimizers
from estimator_compat.canned.rnn_model import make_rnn_layer
from estimator_compat.canned.rnn_model import RNNModel
from estimator_compat.canned.rnn_model import USE_DEFAULT
from estimator_compat.canned.rnn_model import verify_rnn_cell_input
from estimator_compat.estimator import Estimator
from estimator_compat.export.tf1_export import ExportSavedModelV1Mixin
from estimator_compat.head import sequential_head
from estimator_compat.mode_keys import ModeKeys

DEFAULT_LEARNING_RATE = 0.05
DEFAULT_CLIP_NORM = 5.0

__all__ = ["RNNClassifier", "RNNEstimator", "RNNModel", "USE_DEFAULT"]


def _training_optimizer(optimizer: Any) -> Any:
  """The Keras legacy optimizer, stepping global_step as its iterations."""
  if isinstance(optimizer, str):
    optimizer = optimizers.get_optimizer_instance_v2(
        optimizer, learning_rate=DEFAULT_LEARNING_RATE)
    optimizer.clipnorm = DEFAULT_CLIP_NORM
  else:
    optimizer = optimizers.get_optimizer_instance_v2(optimizer)
  # Hooks count steps on global_step: the optimizer increments it.
  optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
  return optimizer


def rnn_estimator_spec(features, labels, mode, head, rnn_model: RNNModel,
                       optimizer: Any, return_sequences: bool):
  """The `EstimatorSpec` of `head` over the logits of `rnn_model`.

  With `return_sequences`, the model's sequence mask joins the features
  under the head's `input_sequence_mask_key` unless the input_fn gave one.
  """
  training_optimizer = (_training_optimizer(optimizer)
                        if mode == ModeKeys.TRAIN else None)
  logits = rnn_model(features, mode == ModeKeys.TRAIN)
  if return_sequences and head.input_sequence_mask_key not in features:
    features[head.input_sequence_mask_key] = logits._keras_mask  # pylint: disable=protected-access
  return head.create_estimator_spec(
      features=features, mode=mode, labels=labels,
      optimizer=training_optimizer, logits=logits,
      update_ops=rnn_model.updates,
      trainable_variables=rnn_model.trainable_variables)


class RNNEstimator(ExportSavedModelV1Mixin, Estimator):
  """An RNN over sequence feature columns, with a given head.

  `units` (ints, one RNN layer each) with `cell_type` ('simple_rnn' by
  default, 'lstm', 'gru' or a cell class), or `rnn_cell_fn` returning the
  cell(s). With `return_sequences`, the head must be sequential (such as
  `SequentialHeadWrapper`). Built on TF 2.15's TF1 Estimator class, it has
  the TF1 `export_savedmodel` too.
  """

  def __init__(self, head: Any, sequence_feature_columns: Sequence[Any],
               context_feature_columns: Optional[Sequence[Any]] = None,
               units: Any = None, cell_type: Any = USE_DEFAULT,
               rnn_cell_fn: Optional[Callable] = None,
               return_sequences: bool = False,
               model_dir: Optional[str] = None, optimizer: Any = "Adagrad",
               config: Any = None) -> None:
    """Raises ValueError for a non-sequential head with return_sequences,
    or `rnn_cell_fn` together with `units` / `cell_type`."""
    if return_sequences and not isinstance(
        head, sequential_head._SequentialHead):  # pylint: disable=protected-access
      raise ValueError(
          "Provided head must be a `_SequentialHead` object when "
          "`return_sequences` is set to True.")
    verify_rnn_cell_input(rnn_cell_fn, units, cell_type)

    def model_fn(features, labels, mode, config):
      del config  # The RNN places nothing by the RunConfig.
      rnn_layer = make_rnn_layer(rnn_cell_fn, units, cell_type,
                                 return_sequences)
      model = RNNModel(
          rnn_layer=rnn_layer, units=head.logits_dimension,
          sequence_feature_columns=sequence_feature_columns,
          context_feature_columns=context_feature_columns,
          return_sequences=return_sequences, name="rnn_model")
      return rnn_estimator_spec(features, labels, mode, head, model,
                                optimizer, return_sequences)

    super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)


class RNNClassifier(RNNEstimator):
  """An RNN classifier: sigmoid for `n_classes=2`, softmax otherwise.

  With `return_sequences`, every unpadded step is classified; the mask is
  the `sequence_mask` feature, or computed from the sequence lengths.
  """

  def __init__(self, sequence_feature_columns: Sequence[Any],
               context_feature_columns: Optional[Sequence[Any]] = None,
               units: Any = None, cell_type: Any = USE_DEFAULT,
               rnn_cell_fn: Optional[Callable] = None,
               return_sequences: bool = False,
               model_dir: Optional[str] = None, n_classes: int = 2,
               weight_column: Any = None,
               label_vocabulary: Optional[Sequence[str]] = None,
               optimizer: Any = "Adagrad",
               loss_reduction: str = dnn_heads.SUM_OVER_BATCH_SIZE,
               sequence_mask: str = "sequence_mask",
               config: Any = None) -> None:
    head = dnn_heads.classifier_head_v2(n_classes, weight_column,
                                        label_vocabulary, loss_reduction)
    if return_sequences:
      logging.info("Converting head to sequential head with "
                   "`SequentialHeadWrapper` to allow sequential predictions.")
      head = sequential_head.SequentialHeadWrapper(
          head, sequence_length_mask=sequence_mask,
          feature_columns=weight_column)
    super().__init__(
        head=head, sequence_feature_columns=sequence_feature_columns,
        context_feature_columns=context_feature_columns, units=units,
        cell_type=cell_type, rnn_cell_fn=rnn_cell_fn,
        return_sequences=return_sequences, model_dir=model_dir,
        optimizer=optimizer, config=config)
