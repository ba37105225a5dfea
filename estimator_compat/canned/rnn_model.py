"""The Keras RNN model of the canned RNN estimators, and its RNN layer.

As TF 2.15's `canned/rnn.py` built them from tf.keras layers (here
tf-keras): `SequenceFeatures` for the sequence columns, `DenseFeatures` for
the context columns (repeated over the steps), one Keras RNN layer, and a
`logits` Dense layer, all inside a Model named `rnn_model`, so checkpoints
hold the same variable names.
"""

from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Union

import tensorflow as tf
from tensorflow.python.feature_column import feature_column_lib
from tensorflow.python.feature_column import sequence_feature_column

SIMPLE_RNN = "simple_rnn"
LSTM = "lstm"
GRU = "gru"

# Marks an argument the caller left out.
USE_DEFAULT = object()


def _layer_classes() -> Dict[str, type]:
  layers = tf.keras.layers
  return {LSTM: layers.LSTM, GRU: layers.GRU, SIMPLE_RNN: layers.SimpleRNN}


def _cell_classes() -> Dict[str, type]:
  layers = tf.keras.layers
  return {LSTM: layers.LSTMCell, GRU: layers.GRUCell,
          SIMPLE_RNN: layers.SimpleRNNCell}


def single_rnn_cell(units: int, cell_type: Union[str, Callable]) -> Any:
  """A cell of `units` units: `cell_type` a name or a cell class.

  Raises:
    ValueError: an unknown name, or a class whose cells lack `call` or
      `state_size`.
  """
  cell_type = _cell_classes().get(cell_type, cell_type)
  if not callable(cell_type):
    raise ValueError(
        "`cell_type` should be a class producing a RNN cell, or a string "
        "specifying the cell type. Supported strings are: "
        f"{[SIMPLE_RNN, LSTM, GRU]}.")
  cell = cell_type(units=units)
  if hasattr(cell, "_enable_caching_device"):
    # As TF 2.15: TF1 graphs cache the cell's variable reads in the loop.
    cell._enable_caching_device = True  # pylint: disable=protected-access
  if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
    raise ValueError("RNN cell should have a `call` and `state_size` method.")
  return cell


def make_rnn_cell_fn(units: Iterable[int],
                     cell_type: Union[str, Callable] = SIMPLE_RNN
                     ) -> Callable[[], Any]:
  """`rnn_cell_fn()` giving one cell per entry of `units` (a list if many)."""

  def rnn_cell_fn():
    cells = [single_rnn_cell(width, cell_type) for width in units]
    return cells[0] if len(cells) == 1 else cells

  return rnn_cell_fn


def verify_rnn_cell_input(rnn_cell_fn: Optional[Callable], units: Any,
                          cell_type: Any) -> None:
  """Raises ValueError when `rnn_cell_fn` comes with units or cell_type."""
  if rnn_cell_fn and (units or cell_type is not USE_DEFAULT):
    raise ValueError(
        "units and cell_type must not be specified when using rnn_cell_fn")


def make_rnn_layer(rnn_cell_fn: Optional[Callable], units: Any,
                   cell_type: Any, return_sequences: bool) -> Any:
  """The Keras RNN layer of the canned RNN estimators.

  A cell name with an int `units` gives that name's layer (`SimpleRNN`,
  `LSTM`, `GRU`); otherwise a `tf.keras.layers.RNN` over `rnn_cell_fn()` or
  over cells of `units` (default type 'simple_rnn').
  """
  verify_rnn_cell_input(rnn_cell_fn, units, cell_type)
  layer_classes = _layer_classes()
  if (isinstance(cell_type, str) and cell_type in layer_classes and
      isinstance(units, int)):
    return layer_classes[cell_type](units=units,
                                    return_sequences=return_sequences)
  if not rnn_cell_fn:
    if cell_type is USE_DEFAULT:
      cell_type = SIMPLE_RNN
    rnn_cell_fn = make_rnn_cell_fn(units, cell_type)
  return tf.keras.layers.RNN(cell=rnn_cell_fn(),
                             return_sequences=return_sequences)


class RNNModel(tf.keras.models.Model):
  """Logits of an RNN over sequence feature columns.

  The context columns' dense values are repeated over the steps and
  appended to the sequence input. With `return_sequences`, the logits are
  per step and carry the sequence mask as their Keras mask.
  """

  def __init__(self, rnn_layer: Any, units: int,
               sequence_feature_columns: Sequence[Any],
               context_feature_columns: Optional[Sequence[Any]] = None,
               activation: Optional[Callable] = None,
               return_sequences: bool = False, **kwargs) -> None:
    """Builds the layers.

    Args:
      rnn_layer: a Keras RNN layer.
      units: the logits dimension.
      sequence_feature_columns: sequence columns (or columns built on one).
      context_feature_columns: dense, non-sequence columns.
      activation: the logits layer's activation (default none).
      return_sequences: logits for every step, not only the last.
      **kwargs: for `tf.keras.Model` (such as `name`).

    Raises:
      ValueError: `units` is not an int.
    """
    super().__init__(**kwargs)
    if not isinstance(units, int):
      raise ValueError(
          f"units must be an int.  Given type: {type(units)}")
    self._return_sequences = return_sequences
    self._sequence_feature_columns = sequence_feature_columns
    self._context_feature_columns = context_feature_columns
    self._sequence_features_layer = tf.keras.experimental.SequenceFeatures(
        sequence_feature_columns)
    self._dense_features_layer = None
    if context_feature_columns:
      self._dense_features_layer = tf.compat.v1.keras.layers.DenseFeatures(
          context_feature_columns)
    self._rnn_layer = rnn_layer
    self._logits_layer = tf.keras.layers.Dense(
        units=units, activation=activation, name="logits")

  def call(self, inputs, training=None):  # pylint: disable=arguments-differ
    """Logits: [batch, units], or [batch, time, units] with sequences.

    Raises:
      ValueError: `inputs` is not a dict.
    """
    if not isinstance(inputs, dict):
      raise ValueError(
          "inputs should be a dictionary of `Tensor`s. Given type: "
          f"{type(inputs)}")
    with tf.compat.v1.name_scope("sequence_input_layer"):
      sequence_input, sequence_length = _call_features_layer(
          self._sequence_features_layer, inputs, training)
      tf.compat.v1.summary.histogram("sequence_length", sequence_length)
      if self._context_feature_columns:
        context_input = _call_features_layer(
            self._dense_features_layer, inputs, training)
        sequence_input = sequence_feature_column.concatenate_context_input(
            context_input, sequence_input=sequence_input)
    mask = tf.sequence_mask(sequence_length)
    outputs = self._rnn_layer(sequence_input, mask=mask, training=training)
    logits = self._logits_layer(outputs)
    if self._return_sequences:
      # The sequential head reads the mask from here.
      logits._keras_mask = mask  # pylint: disable=protected-access
    return logits

  def get_config(self) -> Dict[str, Any]:
    context = self._context_feature_columns
    return {
        "name": self.name,
        "rnn_layer": {"class_name": type(self._rnn_layer).__name__,
                      "config": self._rnn_layer.get_config()},
        "units": self._logits_layer.units,
        "return_sequences": self._return_sequences,
        "activation": tf.keras.activations.serialize(
            self._logits_layer.activation),
        "sequence_feature_columns": feature_column_lib.serialize_feature_columns(
            self._sequence_feature_columns),
        "context_feature_columns": (
            feature_column_lib.serialize_feature_columns(context)
            if context else None),
    }

  @classmethod
  def from_config(cls, config, custom_objects=None):
    config = dict(config)
    rnn_layer = tf.keras.layers.deserialize(
        config.pop("rnn_layer"), custom_objects=custom_objects)
    sequence_columns = feature_column_lib.deserialize_feature_columns(
        config.pop("sequence_feature_columns"), custom_objects=custom_objects)
    context_columns = config.pop("context_feature_columns", None)
    if context_columns:
      context_columns = feature_column_lib.deserialize_feature_columns(
          context_columns, custom_objects=custom_objects)
    activation = tf.keras.activations.deserialize(
        config.pop("activation", None), custom_objects=custom_objects)
    return cls(rnn_layer=rnn_layer,
               sequence_feature_columns=sequence_columns,
               context_feature_columns=context_columns,
               activation=activation, **config)


def _call_features_layer(layer: Any, inputs: Dict[str, Any],
                         training: Optional[bool]) -> Any:
  try:
    return layer(inputs, training=training)
  except TypeError:
    return layer(inputs)
