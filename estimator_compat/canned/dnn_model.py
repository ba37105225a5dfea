"""The DNN logit part of the canned estimators, v1 and v2.

Both are tf-keras Models named `dnn` holding an input layer on the feature
columns, hidden Dense layers (`hiddenlayer_<i>`), optional dropout and batch
norm (`hiddenlayer_<i>/batchnorm_<i>`) and a `logits` Dense layer, built with
the same Keras and `tf.compat.v1.layers` machinery TensorFlow 2.15's canned
DNN used, so the variables get the same names:

* v2 (`DNNModelV2`): Keras layers; the input layer is a `DenseFeatures` named
  `input_from_feature_columns/input_layer`, so embeddings are
  `dnn/input_from_feature_columns/input_layer/<column>/embedding_weights`.
* v1 (`DNNModelV1`): `tf.compat.v1.layers` created in variable scopes, the
  input layer called in `input_from_feature_columns` with the input layer
  partitioner. It must be built inside the `dnn` variable scope (see
  `dnn_scope_v1`).
"""

from typing import Any, Callable, Iterable, Optional, Sequence

import tensorflow as tf
from tensorflow.python.feature_column import feature_column_lib
from tensorflow.python.framework import ops

from estimator_compat.engines.function.legacy_updates import keras_updates
from estimator_compat.errors import NeedsGraphEngine
from estimator_compat.mode_keys import ModeKeys

V2_FEATURE_COLUMNS_ERROR = (
    "Received a feature column from TensorFlow v1, but this is a TensorFlow "
    "v2 Estimator. Please either use v2 feature columns (accessible via "
    "tf.feature_column.* in TF 2.x) with this Estimator, or switch to a v1 "
    "Estimator for use with v1 feature columns (accessible via "
    "tf.compat.v1.estimator.* and tf.compat.v1.feature_column.*, "
    "respectively.")
_INPUT_SCOPE = "input_from_feature_columns"


def check_units(units: Any) -> None:
  """The logits dimension must be an int (a MultiHead gives the sum)."""
  if not isinstance(units, int) or isinstance(units, bool):
    raise ValueError(f"units must be an int.  Given type: {type(units)}")


def add_layer_summary(value: tf.Tensor, tag: str) -> None:
  """The zero fraction and histogram summaries the canned DNN writes."""
  tf.compat.v1.summary.scalar(f"{tag}/fraction_of_zero_values",
                              tf.math.zero_fraction(value))
  tf.compat.v1.summary.histogram(f"{tag}/activation", value)


def _glorot() -> Any:
  return tf.compat.v1.glorot_uniform_initializer()


def _call_input_layer(layer: Any, features: Any, training: bool):
  try:
    return layer(features, training=training)
  except TypeError:  # An input layer without a `training` argument.
    return layer(features)


class _HiddenLayers(tf.keras.Model):
  """Base of the DNN models: hidden, dropout and batch norm layers.

  The lists are attributes of the Model, so Keras tracks the layers and
  `trainable_variables` / `updates` hold theirs.
  """

  def _start_hidden(self, dropout: Optional[float], batch_norm: bool) -> None:
    self._dropout = dropout
    self._batch_norm = batch_norm
    self._hidden_layers = []
    self._dropout_layers = []
    self._batch_norm_layers = []
    self._hidden_tags = []

  def _apply_hidden(self, net: tf.Tensor, training: bool) -> tf.Tensor:
    for i, layer in enumerate(self._hidden_layers):
      net = layer(net)
      if self._dropout is not None and training:
        net = self._dropout_layers[i](net, training=True)
      if self._batch_norm:
        net = self._batch_norm_layers[i](net, training=training)
      add_layer_summary(net, self._hidden_tags[i])
    return net


def _scope_name(name_scope: str) -> str:
  return name_scope[:-1] if name_scope.endswith("/") else name_scope


class DNNModelV2(_HiddenLayers):
  """The v2 canned DNN: Keras layers on v2 feature columns."""

  def __init__(self, units: int, hidden_units: Iterable[int],
               feature_columns: Sequence[Any], activation_fn: Callable,
               dropout: Optional[float], batch_norm: bool,
               name: str = "dnn", **kwargs) -> None:
    super().__init__(name=name, **kwargs)
    if not feature_column_lib.is_feature_column_v2(feature_columns):
      raise ValueError(V2_FEATURE_COLUMNS_ERROR)
    with tf.compat.v1.name_scope(_INPUT_SCOPE) as input_scope:
      self._input_layer = tf.keras.layers.DenseFeatures(
          feature_columns=feature_columns, name=input_scope + "input_layer")
    self._start_hidden(dropout, batch_norm)
    for index, width in enumerate(hidden_units):
      with tf.compat.v1.name_scope(f"hiddenlayer_{index}") as scope:
        layer_name = _scope_name(scope)
        self._hidden_layers.append(tf.keras.layers.Dense(
            units=width, activation=activation_fn,
            kernel_initializer=_glorot(), name=layer_name))
        self._hidden_tags.append(layer_name)
        if dropout is not None:
          self._dropout_layers.append(tf.keras.layers.Dropout(rate=dropout))
        if batch_norm:
          self._batch_norm_layers.append(tf.keras.layers.BatchNormalization(
              momentum=0.999, trainable=True,
              name=f"{layer_name}/batchnorm_{index}"))
    with tf.compat.v1.name_scope("logits") as scope:
      self._logits_tag = _scope_name(scope)
      self._logits_layer = tf.keras.layers.Dense(
          units=units, activation=None, kernel_initializer=_glorot(),
          name=self._logits_tag)

  def call(self, features, mode):  # pylint: disable=arguments-differ
    training = mode == ModeKeys.TRAIN
    net = _call_input_layer(self._input_layer, features, training)
    net = self._apply_hidden(net, training)
    logits = self._logits_layer(net)
    add_layer_summary(logits, self._logits_tag)
    return logits


def _parent_name_scope() -> str:
  current = tf.compat.v1.get_default_graph().get_name_scope()
  return current.rsplit("/", 1)[0] + "/"


class DNNModelV1(_HiddenLayers):
  """The v1 canned DNN: `tf.compat.v1.layers` in variable scopes.

  Build and call it inside the `dnn` variable scope (`dnn_scope_v1`).
  """

  def __init__(self, units: int, hidden_units: Iterable[int],
               feature_columns: Sequence[Any], activation_fn: Callable,
               dropout: Optional[float], input_layer_partitioner: Any,
               batch_norm: bool, name: str = "dnn", **kwargs) -> None:
    super().__init__(name=name, **kwargs)
    if feature_column_lib.is_feature_column_v2(feature_columns):
      self._input_layer = tf.compat.v1.keras.layers.DenseFeatures(
          feature_columns=feature_columns, name="input_layer")
    else:
      self._input_layer = _V1InputLayer(feature_columns)
    self._input_layer_partitioner = input_layer_partitioner
    self._start_hidden(dropout, batch_norm)
    for index, width in enumerate(hidden_units):
      with tf.compat.v1.variable_scope(f"hiddenlayer_{index}") as scope:
        layer = tf.compat.v1.layers.Dense(
            units=width, activation=activation_fn,
            kernel_initializer=_glorot(), name=scope, _scope=scope)
        self._track(scope.name, layer)
        self._hidden_layers.append(layer)
        self._hidden_tags.append(scope.name)
        if dropout is not None:
          dropout_layer = tf.compat.v1.layers.Dropout(rate=dropout)
          self._track(dropout_layer.name, dropout_layer)
          self._dropout_layers.append(dropout_layer)
        if batch_norm:
          norm = tf.compat.v1.layers.BatchNormalization(
              momentum=0.999, trainable=True, name=f"batchnorm_{index}",
              _scope=f"batchnorm_{index}")
          self._track(norm.name, norm)
          self._batch_norm_layers.append(norm)
    with tf.compat.v1.variable_scope("logits") as scope:
      self._logits_layer = tf.compat.v1.layers.Dense(
          units=units, activation=None, kernel_initializer=_glorot(),
          name=scope, _scope=scope)
      self._track(scope.name, self._logits_layer)
      self._logits_tag = scope.name

  def _track(self, name: str, layer: Any) -> None:
    setattr(self, name, layer)

  def call(self, features, mode):  # pylint: disable=arguments-differ
    training = mode == ModeKeys.TRAIN
    # Ops go in the enclosing `dnn` name scope, not the Model's own.
    with tf.compat.v1.name_scope(_parent_name_scope()):
      with tf.compat.v1.variable_scope(
          _INPUT_SCOPE, partitioner=self._input_layer_partitioner):
        net = _call_input_layer(self._input_layer, features, training)
      net = self._apply_hidden(net, training)
      logits = self._logits_layer(net)
      add_layer_summary(logits, self._logits_tag)
      return logits


class _V1InputLayer:
  """`tf.compat.v1.feature_column.input_layer` for non-v2 columns."""

  def __init__(self, feature_columns: Sequence[Any]) -> None:
    self._columns = list(feature_columns)

  def __call__(self, features):
    return tf.compat.v1.feature_column.input_layer(features, self._columns)


def default_partitioners(num_ps_replicas: int):
  """The v1 DNN's `dnn` scope and input layer partitioners."""
  dnn = tf.compat.v1.min_max_variable_partitioner(
      max_partitions=num_ps_replicas)
  input_layer = tf.compat.v1.min_max_variable_partitioner(
      max_partitions=num_ps_replicas, min_slice_size=64 << 20)
  return dnn, input_layer


def check_partitioned_training(mode: str, family: str) -> None:
  """Sends v1 training with partitioned variables to the graph engine.

  The v1 canned estimators partition their variables (one part without
  parameter servers), and TensorFlow 2.15 saved their TF1 optimizer slots
  as slices of `<variable>/t_0/<Optimizer>`. TF1 slot creation needs the
  partitions' graph ops, which the function engine's eagerly held variables
  do not have. Raised while the model_fn is traced, before any step.
  """
  if mode == ModeKeys.TRAIN and ops.executing_eagerly_outside_functions():
    raise NeedsGraphEngine(
        f"A tf.compat.v1.estimator {family} trains partitioned variables with "
        "a tf.compat.v1.train optimizer, whose slot variables need a TF1 "
        "Session graph (their checkpoint names come from the partitions' "
        "graph ops). Fix: use the default engine or engine='graph', or the "
        f"tf.estimator (v2) {family}.")


def dnn_scope_v1(features: Any, partitioner: Any):
  """The `dnn` variable scope the v1 DNN is built and trained in.

  The head's train op must be created in it as well: TensorFlow 2.15 did, so
  its slot variables are saved as `<variable>/t_0/<Optimizer>`.
  """
  return tf.compat.v1.variable_scope(
      "dnn", values=tuple(features.values()), partitioner=partitioner)


def build_logits_v2(units: int, hidden_units: Iterable[int],
                    feature_columns: Sequence[Any], activation_fn: Callable,
                    dropout: Optional[float], batch_norm: bool, features: Any,
                    mode: str):
  """Logits, trainable variables and update ops of a v2 DNN.

  The update ops (batch norm moving averages) are the Model's `updates`; in
  a function trace tf-keras leaves those out, and the function engine has
  recorded them (legacy_updates.keras_updates), so the new ones there are
  taken.
  """
  check_units(units)
  graph = tf.compat.v1.get_default_graph()
  before = keras_updates(graph)
  model = DNNModelV2(units, hidden_units, feature_columns, activation_fn,
                     dropout, batch_norm, name="dnn")
  logits = model(features, mode)
  update_ops = list(model.updates)
  if not update_ops:
    update_ops = [op for op in keras_updates(graph)
                  if not any(op is seen for seen in before)]
  return logits, model.trainable_variables, update_ops
