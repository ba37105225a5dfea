"""canned/rnn_model.py on its own: the cells and layers it builds, RNNModel
called eagerly, its config round trip and its argument errors (the canned
RNN estimators' tests train it inside an Estimator)."""

import numpy as np
import pytest
import tensorflow as tf

from estimator_compat.canned import rnn_model

# Two examples: 3 steps and 1 step of a 1-wide sequence value.
SEQUENCE = tf.sparse.SparseTensor(
    indices=[[0, 0], [0, 1], [0, 2], [1, 0]], values=[1.0, 2.0, 3.0, 4.0],
    dense_shape=[2, 3])


def _columns():
  sequence = [tf.feature_column.sequence_numeric_column("s")]
  context = [tf.feature_column.numeric_column("c")]
  return sequence, context


def _model(return_sequences, context=True):
  sequence, context_columns = _columns()
  layer = rnn_model.make_rnn_layer(None, 4, "gru", return_sequences)
  return rnn_model.RNNModel(
      layer, 3, sequence, context_columns if context else None,
      activation=tf.nn.relu, return_sequences=return_sequences,
      name="rnn_model")


def test_call_gives_logits_per_example_or_per_step_with_the_mask():
  inputs = {"s": SEQUENCE, "c": tf.constant([[1.0], [2.0]])}
  last = _model(False)(inputs)
  assert last.shape == (2, 3)
  assert np.all(last.numpy() >= 0)  # the relu activation
  steps = _model(True)(inputs)
  assert steps.shape == (2, 3, 3)
  assert steps._keras_mask.numpy().tolist() == [  # pylint: disable=protected-access
      [True, True, True], [True, False, False]]
  with pytest.raises(ValueError, match="inputs should be a dictionary of "
                     "`Tensor`s. Given type: "):
    _model(False)(SEQUENCE)


def test_config_round_trip():
  model = _model(True)
  model({"s": SEQUENCE, "c": tf.constant([[1.0], [2.0]])})
  config = model.get_config()
  assert config["rnn_layer"]["class_name"] == "GRU"
  assert (config["units"], config["return_sequences"],
          config["activation"]) == (3, True, "relu")
  again = rnn_model.RNNModel.from_config(config)
  assert again.get_config() == config
  plain = _model(False, context=False)
  config = plain.get_config()
  assert config["context_feature_columns"] is None
  assert rnn_model.RNNModel.from_config(config).get_config() == config


def test_cells_and_layers():
  assert isinstance(rnn_model.make_rnn_layer(None, 2, rnn_model.LSTM, False),
                    tf.keras.layers.LSTM)
  stacked = rnn_model.make_rnn_layer(None, [2, 3], rnn_model.USE_DEFAULT,
                                     True)
  assert isinstance(stacked, tf.keras.layers.RNN)
  assert [type(c).__name__ for c in stacked.cell.cells] == [
      "SimpleRNNCell", "SimpleRNNCell"]
  assert [c.units for c in stacked.cell.cells] == [2, 3]
  own = rnn_model.make_rnn_layer(
      lambda: tf.keras.layers.GRUCell(5), None, rnn_model.USE_DEFAULT, False)
  assert own.cell.units == 5
  with pytest.raises(ValueError, match="units and cell_type must not be "
                     "specified when using rnn_cell_fn"):
    rnn_model.make_rnn_layer(lambda: None, 2, rnn_model.USE_DEFAULT, False)
  with pytest.raises(ValueError, match=r"Supported strings are: "
                     r"\['simple_rnn', 'lstm', 'gru'\]"):
    rnn_model.single_rnn_cell(2, "transformer")

  class NoState:  # pylint: disable=too-few-public-methods

    def __init__(self, units):
      self.units = units

    def call(self, inputs):
      return inputs

  with pytest.raises(ValueError, match="RNN cell should have a `call` and "
                     "`state_size` method."):
    rnn_model.single_rnn_cell(2, NoState)
  with pytest.raises(ValueError, match="units must be an int.  Given type: "
                     "<class 'list'>"):
    rnn_model.RNNModel(stacked, [3], _columns()[0])
