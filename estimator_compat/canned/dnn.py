"""DNNClassifier, DNNRegressor and DNNEstimator, v2 and v1.

`DNNClassifierV2` & co. are `tf.estimator.*` (Keras legacy optimizers, v2
feature columns); `DNNClassifier` & co. are `tf.compat.v1.estimator.*`
(`tf.compat.v1.train` optimizers, variable partitioners), as in TensorFlow
2.15's `canned/dnn.py`, whose checkpoints they read and write.
"""

from typing import Any, Callable, Iterable, Optional, Sequence

import tensorflow as tf

from estimator_compat.canned import dnn_heads
from estimator_compat.canned import dnn_model
from estimator_compat.canned import optimizers
from estimator_compat.estimator import Estimator
from estimator_compat.mode_keys import ModeKeys


def validate_features(features: Any) -> None:
  if not isinstance(features, dict):
    raise ValueError(
        "features should be a dictionary of `Tensor`s. Given type: "
        f"{type(features)}. Fix: the input_fn of a canned estimator returns "
        "a dict of feature name to Tensor.")


def dnn_logit_fn_builder(units: int, hidden_units: Iterable[int],
                         feature_columns: Sequence[Any],
                         activation_fn: Callable, dropout: Optional[float],
                         input_layer_partitioner: Any,
                         batch_norm: bool) -> Callable[..., tf.Tensor]:
  """`tf.compat.v1.estimator.experimental.dnn_logit_fn_builder`.

  Returns:
    `logit_fn(features, mode)` building the v1 DNN in the current variable
    scope and returning its logits.
  """
  dnn_model.check_units(units)

  def dnn_logit_fn(features, mode):
    model = dnn_model.DNNModelV1(
        units, hidden_units, feature_columns, activation_fn, dropout,
        input_layer_partitioner, batch_norm, name="dnn")
    return model(features, mode)

  return dnn_logit_fn


def dnn_logit_fn_builder_v2(units: int, hidden_units: Iterable[int],
                            feature_columns: Sequence[Any],
                            activation_fn: Callable, dropout: Optional[float],
                            batch_norm: bool) -> Callable[..., tf.Tensor]:
  """The v2 DNN's `logit_fn(features, mode)` (Keras layers, v2 columns)."""
  dnn_model.check_units(units)

  def dnn_logit_fn(features, mode):
    model = dnn_model.DNNModelV2(units, hidden_units, feature_columns,
                                 activation_fn, dropout, batch_norm,
                                 name="dnn")
    return model(features, mode)

  return dnn_logit_fn


def dnn_model_fn_v1(features, labels, mode, head, hidden_units,
                    feature_columns, optimizer="Adagrad",
                    activation_fn=tf.nn.relu, dropout=None,
                    input_layer_partitioner=None, config=None,
                    batch_norm=False):
  """The v1 canned DNN model_fn: logits and head in the `dnn` scope."""
  optimizer = optimizers.get_optimizer_instance(
      optimizer, learning_rate=optimizers.DNN_LEARNING_RATE)
  validate_features(features)
  dnn_model.check_partitioned_training(mode, "DNN estimator")
  num_ps_replicas = config.num_ps_replicas if config else 0
  dnn_partitioner, input_partitioner = dnn_model.default_partitioners(
      num_ps_replicas)
  with dnn_model.dnn_scope_v1(features, dnn_partitioner):
    logit_fn = dnn_logit_fn_builder(
        head.logits_dimension, hidden_units, feature_columns, activation_fn,
        dropout, input_layer_partitioner or input_partitioner, batch_norm)
    logits = logit_fn(features=features, mode=mode)
    return head.create_estimator_spec(
        features=features, mode=mode, labels=labels, optimizer=optimizer,
        logits=logits)


def dnn_model_fn_v2(features, labels, mode, head, hidden_units,
                    feature_columns, optimizer="Adagrad",
                    activation_fn=tf.nn.relu, dropout=None, config=None,
                    use_tpu=False, batch_norm=False):
  """The v2 canned DNN model_fn: Keras layers, the optimizer on global_step.

  Raises:
    NotImplementedError: `use_tpu` (TPUEstimator specs are not supported).
  """
  del config  # The v2 DNN partitions nothing.
  if use_tpu:
    raise NotImplementedError(
        "dnn_model_fn_v2(use_tpu=True) builds the head's TPUEstimatorSpec "
        "for a TPU, which estimator_compat's heads do not build "
        "(docs/known_differences.md, dnn-model-fn-v2-use-tpu). Fix: "
        "use_tpu=False (the same model, also under TPUEstimator with "
        "use_tpu=False).")
  validate_features(features)
  logits, trainable_variables, update_ops = dnn_model.build_logits_v2(
      head.logits_dimension, hidden_units, feature_columns, activation_fn,
      dropout, batch_norm, features, mode)
  if mode == ModeKeys.TRAIN:
    optimizer = optimizers.get_optimizer_instance_v2(optimizer)
    # Hooks count steps on global_step: the optimizer increments it.
    optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
  return head.create_estimator_spec(
      features=features, mode=mode, labels=labels, optimizer=optimizer,
      logits=logits, trainable_variables=trainable_variables,
      update_ops=update_ops)


def _v2_model_fn(head, hidden_units, feature_columns, optimizer,
                 activation_fn, dropout, batch_norm):
  columns = tuple(feature_columns or [])

  def model_fn(features, labels, mode, config):
    return dnn_model_fn_v2(
        features, labels, mode, head, hidden_units, columns,
        optimizer=optimizer, activation_fn=activation_fn, dropout=dropout,
        config=config, batch_norm=batch_norm)

  return model_fn


def _v1_model_fn(head, hidden_units, feature_columns, optimizer,
                 activation_fn, dropout, input_layer_partitioner,
                 batch_norm):
  columns = tuple(feature_columns or [])

  def model_fn(features, labels, mode, config):
    return dnn_model_fn_v1(
        features, labels, mode, head, hidden_units, columns,
        optimizer=optimizer, activation_fn=activation_fn, dropout=dropout,
        input_layer_partitioner=input_layer_partitioner, config=config,
        batch_norm=batch_norm)

  return model_fn


class DNNClassifierV2(Estimator):
  """`tf.estimator.DNNClassifier`: a feed-forward classifier.

  Binary (sigmoid) for `n_classes=2`, softmax otherwise. `optimizer` is a
  name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'; the Keras default
  learning rate), a `tf.keras.optimizers.legacy` optimizer or a callable
  returning one.
  """

  def __init__(self, hidden_units: Iterable[int],
               feature_columns: Sequence[Any], model_dir: Optional[str] = None,
               n_classes: int = 2, weight_column: Any = None,
               label_vocabulary: Optional[Sequence[str]] = None,
               optimizer: Any = "Adagrad",
               activation_fn: Callable = tf.nn.relu,
               dropout: Optional[float] = None, config: Any = None,
               warm_start_from: Any = None,
               loss_reduction: str = dnn_heads.SUM_OVER_BATCH_SIZE,
               batch_norm: bool = False) -> None:
    head = dnn_heads.classifier_head_v2(n_classes, weight_column,
                                        label_vocabulary, loss_reduction)
    super().__init__(
        model_fn=_v2_model_fn(head, hidden_units, feature_columns, optimizer,
                              activation_fn, dropout, batch_norm),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNRegressorV2(Estimator):
  """`tf.estimator.DNNRegressor`: a feed-forward regressor (mean squared
  error, `label_dimension` outputs)."""

  def __init__(self, hidden_units: Iterable[int],
               feature_columns: Sequence[Any], model_dir: Optional[str] = None,
               label_dimension: int = 1, weight_column: Any = None,
               optimizer: Any = "Adagrad",
               activation_fn: Callable = tf.nn.relu,
               dropout: Optional[float] = None, config: Any = None,
               warm_start_from: Any = None,
               loss_reduction: str = dnn_heads.SUM_OVER_BATCH_SIZE,
               batch_norm: bool = False) -> None:
    head = dnn_heads.regression_head_v2(label_dimension, weight_column,
                                        loss_reduction)
    super().__init__(
        model_fn=_v2_model_fn(head, hidden_units, feature_columns, optimizer,
                              activation_fn, dropout, batch_norm),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNEstimatorV2(Estimator):
  """`tf.estimator.DNNEstimator`: a feed-forward network with a given head."""

  def __init__(self, head: Any, hidden_units: Iterable[int],
               feature_columns: Sequence[Any], model_dir: Optional[str] = None,
               optimizer: Any = "Adagrad",
               activation_fn: Callable = tf.nn.relu,
               dropout: Optional[float] = None, config: Any = None,
               warm_start_from: Any = None, batch_norm: bool = False) -> None:
    super().__init__(
        model_fn=_v2_model_fn(head, hidden_units, feature_columns, optimizer,
                              activation_fn, dropout, batch_norm),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNClassifier(Estimator):
  """`tf.compat.v1.estimator.DNNClassifier`: TF1 optimizers (default Adagrad
  0.05), a partitioned input layer, SUM loss reduction."""

  def __init__(self, hidden_units: Iterable[int],
               feature_columns: Sequence[Any], model_dir: Optional[str] = None,
               n_classes: int = 2, weight_column: Any = None,
               label_vocabulary: Optional[Sequence[str]] = None,
               optimizer: Any = "Adagrad",
               activation_fn: Callable = tf.nn.relu,
               dropout: Optional[float] = None,
               input_layer_partitioner: Any = None, config: Any = None,
               warm_start_from: Any = None,
               loss_reduction: str = dnn_heads.V1_SUM,
               batch_norm: bool = False) -> None:
    head = dnn_heads.classifier_head_v1(n_classes, weight_column,
                                        label_vocabulary, loss_reduction)
    super().__init__(
        model_fn=_v1_model_fn(head, hidden_units, feature_columns, optimizer,
                              activation_fn, dropout, input_layer_partitioner,
                              batch_norm),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNRegressor(Estimator):
  """`tf.compat.v1.estimator.DNNRegressor`: TF1 optimizers, SUM loss."""

  def __init__(self, hidden_units: Iterable[int],
               feature_columns: Sequence[Any], model_dir: Optional[str] = None,
               label_dimension: int = 1, weight_column: Any = None,
               optimizer: Any = "Adagrad",
               activation_fn: Callable = tf.nn.relu,
               dropout: Optional[float] = None,
               input_layer_partitioner: Any = None, config: Any = None,
               warm_start_from: Any = None,
               loss_reduction: str = dnn_heads.V1_SUM,
               batch_norm: bool = False) -> None:
    head = dnn_heads.regression_head_v1(label_dimension, weight_column,
                                        loss_reduction)
    super().__init__(
        model_fn=_v1_model_fn(head, hidden_units, feature_columns, optimizer,
                              activation_fn, dropout, input_layer_partitioner,
                              batch_norm),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNEstimator(Estimator):
  """`tf.compat.v1.estimator.DNNEstimator`: a TF1 head and TF1 optimizers."""

  def __init__(self, head: Any, hidden_units: Iterable[int],
               feature_columns: Sequence[Any], model_dir: Optional[str] = None,
               optimizer: Any = "Adagrad",
               activation_fn: Callable = tf.nn.relu,
               dropout: Optional[float] = None,
               input_layer_partitioner: Any = None, config: Any = None,
               warm_start_from: Any = None, batch_norm: bool = False) -> None:
    super().__init__(
        model_fn=_v1_model_fn(head, hidden_units, feature_columns, optimizer,
                              activation_fn, dropout, input_layer_partitioner,
                              batch_norm),
        model_dir=model_dir, config=config, warm_start_from=warm_start_from)

